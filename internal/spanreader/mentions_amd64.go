//go:build amd64 && !purego

package spanreader

import "golang.org/x/sys/cpu"

// The vector search of mentionsDocuments: Wojciech Muła's "SIMD-friendly
// algorithms for substring searching". strings.Index (bytealg.IndexString)
// compares page_content at one place a step; strings.IndexByte of one of
// its bytes (the pure-Go search) is as fast as memory on prose, but stops
// at every '_' of JSON whose keys are snake_case, as LangChain's are. This
// compares 32 places at once, each against two bytes of page_content at
// their offsets ('_' at 4 and 't' at 11: '_' is rare in prose, and a 't'
// 7 bytes after an '_' rare in snake_case keys, less so than the 'c' right
// after it), and checks each place where both match with two 8-byte
// compares. Each block of 64 places first looks for '_' alone, one load a
// 32 bytes as IndexByte: prose is read as fast as IndexByte reads it (its
// loop does 32 bytes a step, this 64), and the 't's are looked at only in
// blocks with an '_'.
//
// Nothing outside s is read: the blocks stop where the next would read
// past the end, and the places left, fewer than 32, are looked at by one
// more block that ends at the end of s and overlaps the one before. Hence
// avx2MinLen, the length of one block; shorter texts are searched in Go
// (which is as fast there: BenchmarkMentionsDocumentsImpls).

// useAVX2 chooses mentionsDocumentsAVX2 for texts of avx2MinLen bytes or
// more. Tests set it to false to run the pure-Go search. The search also
// uses BLSR, of BMI1, which every AVX2 CPU we know of has but no
// specification promises.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasBMI1

// avx2MinLen is the shortest text mentionsDocumentsAVX2 takes: a block of
// 32 places and the 11 bytes after the last.
const avx2MinLen = 32 + len(traceloopDocumentsKey) - 1

// mentionsDocumentsAVX2 is mentionsDocuments, for len(s) >= avx2MinLen on
// a CPU with AVX2 (mentions_amd64.s).
//
//go:noescape
func mentionsDocumentsAVX2(s string) bool
