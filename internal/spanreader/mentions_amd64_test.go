//go:build amd64 && !purego

package spanreader

func init() {
	if useAVX2 {
		mentionsImpls = append(mentionsImpls, mentionsImpl{"avx2", true})
	}
}

// withAVX2 runs f with mentionsDocuments' choice of the vector search set
// to on.
func withAVX2(on bool, f func()) {
	defer func(was bool) { useAVX2 = was }(useAVX2)
	useAVX2 = on
	f()
}
