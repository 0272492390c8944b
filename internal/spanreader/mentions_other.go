//go:build !amd64 || purego

package spanreader

// Without amd64 assembly, mentionsDocuments is the pure-Go search.
const (
	useAVX2    = false
	avx2MinLen = 0
)

func mentionsDocumentsAVX2(string) bool { panic("unreachable") }
