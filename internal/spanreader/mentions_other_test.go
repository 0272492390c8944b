//go:build !amd64 || purego

package spanreader

// withAVX2 runs f: there is no vector search to choose (on is false).
func withAVX2(_ bool, f func()) { f() }
