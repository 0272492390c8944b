//go:build amd64 && !purego

#include "textflag.h"

// func mentionsDocumentsAVX2(s string) bool
//
// mentionsDocuments for texts of avx2MinLen (43) bytes or more, on a CPU
// with AVX2: see mentions_amd64.go for the design. A place p is where
// page_content could start; it is a candidate when s[p+4] is '_' and
// s[p+11] is 't', and a match when the 8 bytes at p are "page_con" and
// the 8 at p+4 "_content".
//
// Every read stays in s: a block of 32 places from DI reads s[DI+4 :
// DI+43] (the compares) and, for a candidate p < DI+32, s[p : p+12] (its
// check), all in s[DI : DI+43]; so a 32-place block runs only while
// DI <= len(s)-43, and a 64-place one, in s[DI : DI+75], while
// DI <= len(s)-75. The last places (fewer than 32) are
// the block at len(s)-43, which overlaps places already looked at.
//
// Registers: SI the base of s, BX len(s), DI the first place of the
// block, R8 and R9 the first and last 8 bytes of page_content, Y1 '_' and
// Y3 't' in every byte, R10 the last first place of a 32-place block, R11
// of a 64-place one; AX the candidates of a block, CX one of them.
TEXT ·mentionsDocumentsAVX2(SB), NOSPLIT, $0-17
	MOVQ s_base+0(FP), SI
	MOVQ s_len+8(FP), BX
	MOVQ $0x6e6f635f65676170, R8 // "page_con", little-endian
	MOVQ $0x746e65746e6f635f, R9 // "_content"
	MOVL $'_', AX
	MOVQ AX, X1
	VPBROADCASTB X1, Y1
	MOVL $'t', AX
	MOVQ AX, X3
	VPBROADCASTB X3, Y3
	XORQ DI, DI
	LEAQ -43(BX), R10
	LEAQ -75(BX), R11

	// 64 places an iteration. '_' alone first: where a text has none
	// (prose) this is one load and compare per 32 bytes, as
	// strings.IndexByte, unrolled twice.
loop64:
	CMPQ     DI, R11
	JGT      loop32
	VPCMPEQB 4(SI)(DI*1), Y1, Y4
	VPCMPEQB 36(SI)(DI*1), Y1, Y6
	VPOR     Y4, Y6, Y8
	VPTEST   Y8, Y8
	JNZ      underscore64

next64:
	ADDQ $64, DI
	JMP  loop64

	// An '_': AND the places with a 't' 7 bytes on.
underscore64:
	VPCMPEQB 11(SI)(DI*1), Y3, Y5
	VPAND    Y4, Y5, Y5
	VPCMPEQB 43(SI)(DI*1), Y3, Y7
	VPAND    Y6, Y7, Y7
	VPOR     Y5, Y7, Y8
	VPTEST   Y8, Y8
	JZ       next64
	VPMOVMSKB Y5, AX
	VPMOVMSKB Y7, CX
	SHLQ      $32, CX
	ORQ       CX, AX

candidate64:
	BSFQ AX, CX
	ADDQ DI, CX
	CMPQ R8, (SI)(CX*1)
	JNE  nocandidate64
	CMPQ R9, 4(SI)(CX*1)
	JEQ  found

nocandidate64:
	BLSRQ AX, AX
	JNZ   candidate64
	JMP   next64

	// 32 places, '_' and 't' at once: at most two blocks and the last.
loop32:
	CMPQ DI, R10
	JGT  last

block32:
	VPCMPEQB  4(SI)(DI*1), Y1, Y4
	VPCMPEQB  11(SI)(DI*1), Y3, Y5
	VPAND     Y4, Y5, Y5
	VPMOVMSKB Y5, AX
	TESTL     AX, AX
	JNZ       candidate32

next32:
	ADDQ $32, DI
	JMP  loop32

candidate32:
	BSFL AX, CX
	ADDQ DI, CX
	CMPQ R8, (SI)(CX*1)
	JNE  nocandidate32
	CMPQ R9, 4(SI)(CX*1)
	JEQ  found

nocandidate32:
	BLSRL AX, AX
	JNZ   candidate32
	JMP   next32

last:
	// Places DI to len(s)-12 are left, fewer than 32: the block at
	// len(s)-43 has them. After it DI is len(s)-11, and the search ends.
	LEAQ -11(BX), CX
	CMPQ DI, CX
	JGE  notfound
	MOVQ R10, DI
	JMP  block32

notfound:
	VZEROUPPER
	MOVB $0, ret+16(FP)
	RET

found:
	VZEROUPPER
	MOVB $1, ret+16(FP)
	RET
