package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// keyPaths lists every YAML key of t (a struct type) under prefix, as
// mapstructure reads them: squashed structs share their parent's prefix,
// slices name their elements' keys under their own, and a
// configoptional.Optional[T] (no exported fields, a Get returning *T) has
// T's keys.
func keyPaths(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	exported := false
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		exported = true
		tag, ok := f.Tag.Lookup("mapstructure")
		if !ok {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case name == "-":
		case strings.Contains(opts, "squash"):
			keys = append(keys, keyPaths(f.Type, prefix)...)
		default:
			path := strings.TrimPrefix(prefix+"."+name, ".")
			keys = append(keys, path)
			keys = append(keys, keyPaths(f.Type, path)...)
		}
	}
	if !exported {
		if get, ok := reflect.PointerTo(t).MethodByName("Get"); ok && get.Type.NumOut() == 1 {
			keys = append(keys, keyPaths(get.Type.Out(0), prefix)...)
		}
	}
	return keys
}

// keysToAvoid are the key paths, and their last segments, that could only
// be a key of the processor's config: those with a dot or an underscore.
// Plain words such as timeout or mode are everyday words too.
func keysToAvoid() []string {
	set := map[string]bool{}
	for _, path := range keyPaths(reflect.TypeFor[Config](), "") {
		set[path] = true
		set[path[strings.LastIndex(path, ".")+1:]] = true
	}
	var keys []string
	for k := range set {
		if strings.ContainsAny(k, "._") {
			keys = append(keys, k)
		}
	}
	// Longest first, so that a path is reported rather than its last segment.
	sort.Slice(keys, func(a, b int) bool {
		return len(keys[a]) > len(keys[b]) || len(keys[a]) == len(keys[b]) && keys[a] < keys[b]
	})
	return keys
}

// wireNames are keys that are also the name of a Chat Completions request
// field, which the OpenAI-compatible backend writes on the wire: quoted as
// a JSON field, they are the wire's.
var wireNames = []string{"response_format"}

// keyMatcher finds keys named as whole words.
type keyMatcher struct {
	keys []string
	res  []*regexp.Regexp
}

func newKeyMatcher(keys []string) keyMatcher {
	m := keyMatcher{keys: keys}
	for _, k := range keys {
		m.res = append(m.res, regexp.MustCompile(`(^|[^A-Za-z0-9_.])`+regexp.QuoteMeta(k)+`($|[^A-Za-z0-9_])`))
	}
	return m
}

// mentions returns the offsets and keys of text's mentions of a key.
func (m keyMatcher) mentions(text string) (offsets []int, keys []string) {
	for i, k := range m.keys {
		if !strings.Contains(text, k) {
			continue
		}
		for _, loc := range m.res[i].FindAllStringIndex(text, -1) {
			start := loc[0] + strings.Index(text[loc[0]:loc[1]], k)
			if slices.Contains(wireNames, k) && start > 0 && text[start-1] == '"' && strings.HasPrefix(text[start+len(k):], `"`) {
				continue
			}
			offsets, keys = append(offsets, start), append(keys, k)
		}
	}
	return offsets, keys
}

// The judge packages receive plain typed options: no file under judge/
// names a key of the processor's config, in code, messages, comments or
// tests. This package owns them all.
func TestJudgePackagesNameNoKey(t *testing.T) {
	keys := keysToAvoid()
	for _, want := range []string{"judge.max_chunk_chars", "max_chunk_chars", "cache.ttl", "max_wait", "judge.cascade.min_confidence", "judge.base_url", "judge.tls.ca_file", "judge.auth.authenticator"} {
		if !slices.Contains(keys, want) {
			t.Errorf("key %s not collected from Config", want)
		}
	}
	m := newKeyMatcher(keys)
	if _, got := m.mentions("see judge.base_url, or max_wait."); !slices.Equal(got, []string{"judge.base_url", "max_wait"}) {
		t.Errorf("mentions found %v", got)
	}
	if _, got := m.mentions(`body["response_format"], timeout, Mode, e.cache.ttl, maxChunkChars, per_chunk`); len(got) != 0 {
		t.Errorf("mentions found %v in text that names no key", got)
	}
	err := filepath.WalkDir(filepath.Join("..", "judge"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(b)
		offsets, found := m.mentions(text)
		for i, off := range offsets {
			line := strings.Count(text[:off], "\n") + 1
			t.Errorf("%s:%d names %s", path, line, found[i])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
