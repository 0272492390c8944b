package spanreader

import (
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// No implementation of mentionsDocuments reads outside its text: texts of
// every length up to 200 that end where an unreadable page starts, or
// start where one ends, are searched (a read past either end faults).
func TestMentionsDocumentsStaysInText(t *testing.T) {
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 3*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip("mmap:", err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[:page], syscall.PROT_NONE); err != nil {
		t.Skip("mprotect:", err)
	}
	if err := syscall.Mprotect(mem[2*page:], syscall.PROT_NONE); err != nil {
		t.Skip("mprotect:", err)
	}
	rw := mem[page : 2*page]
	const key = traceloopDocumentsKey
	for _, filler := range []string{"_c", "page_conten", `"a_b": "c", `} {
		fill := strings.Repeat(filler, 200/len(filler)+1)
		for n := 0; n <= 200; n++ {
			for _, text := range []string{
				fill[:n],
				fill[:n-min(n, len(key))] + key[:min(n, len(key))],
				key[:min(n, len(key))] + fill[:n-min(n, len(key))],
			} {
				want := strings.Contains(text, key)
				for _, at := range []int{0, page - n} { // at the start, at the end
					copy(rw[at:], text)
					s := unsafe.String(unsafe.SliceData(rw[at:]), n)
					for _, m := range mentionsImpls {
						if got := m.f(s); got != want {
							t.Fatalf("%s(%q) at %d = %v, want %v", m.name, s, at, got, want)
						}
					}
				}
			}
		}
	}
}
