package spanreader

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// The scanner must accept exactly the JSON encoding/json accepts (up to
// maxNesting), and the finders must find what the json.Unmarshal-based
// finders they replace found (legacy_test.go), whatever the input.

// nesting is the deepest a JSON text nests arrays and objects.
func nesting(s string) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

func scansAsJSON(s string) bool {
	sc := newScanner(s)
	return sc.skip() && sc.end()
}

var jsonCorpus = []string{
	`0`, `-0`, `1.5e10`, `-1.5E-3`, `1e+2`, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `0x1`, `1.5e`, `--1`,
	`true`, `false`, `null`, `tru`, `nul`, `nulll`, `True`,
	`""`, `"a"`, `"\""`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\u00e9"`, `"\uD83D\uDE00"`, `"\ud800"`,
	`"\u12"`, `"\u12G4"`, `"\x"`, `"\'"`, "\"\x01\"", "\"tab\there\"", `"unterminated`, "\"\xff\xfe\"",
	`[]`, `[1,2]`, `[1,]`, `[,1]`, `[1 2]`, `[`, `]`, `[[]]`, `[[]`, `[]]`,
	`{}`, `{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":1 "b":2}`, `{"a":}`, `{"a"}`, `{,}`, `{"a":1}}`,
	` {"a" : [ 1 , { "b" : null } ] } `, "\t[\n1\r]\n", `[] []`, `1 2`, ``, ` `, "\u00a0[]",
	`{"documents": [{"page_content": "x"}]}`, `{"outputs": {"documents": []}}`,
}

func TestScannerAcceptsWhatEncodingJSONAccepts(t *testing.T) {
	for _, s := range jsonCorpus {
		if got, want := scansAsJSON(s), json.Valid([]byte(s)); got != want {
			t.Errorf("%q: scanner %v, encoding/json %v", s, got, want)
		}
	}
}

func TestNestingIsBounded(t *testing.T) {
	for _, open := range []string{"[", `{"a":`, `{"documents":`} {
		closing := map[string]string{"[": "]", `{"a":`: "}", `{"documents":`: "}"}[open]
		at := strings.Repeat(open, maxNesting) + "1" + strings.Repeat(closing, maxNesting)
		if !scansAsJSON(at) {
			t.Errorf("%s nested %d deep is refused", open, maxNesting)
		}
		over := strings.Repeat(open, maxNesting+1) + "1" + strings.Repeat(closing, maxNesting+1)
		if scansAsJSON(over) {
			t.Errorf("%s nested %d deep is accepted", open, maxNesting+1)
		}
	}
}

func TestKeyMatching(t *testing.T) {
	tests := []struct {
		raw, name   string
		exact, fold bool
	}{
		{`"parts"`, "parts", true, true},
		{`"Parts"`, "parts", false, true},
		{`"PARTS"`, "parts", false, true},
		{`"part\u017f"`, "parts", false, true}, // ſ folds to s, as in encoding/json
		{"\"part\u017f\"", "parts", false, true},
		{`"\u0070arts"`, "parts", true, true},
		{`"\u0050arts"`, "parts", false, true},
		{`"part"`, "parts", false, false},
		{`"partss"`, "parts", false, false},
		{`"par\"ts"`, "parts", false, false},
		{"\"part\xff\"", "parts", false, false},
		{`"documents"`, "documents", true, true},
		{`"docu\u006dents"`, "documents", true, true},
		{`"\ud800documents"`, "documents", false, false},
		{`"\uD835\uDC1Documents"`, "documents", false, false},
		{`"\u212Aind"`, "kind", false, true}, // the Kelvin sign folds to k
	}
	for _, tc := range tests {
		if got := keyIs(tc.raw, tc.name); got != tc.exact {
			t.Errorf("keyIs(%s, %s) = %v", tc.raw, tc.name, got)
		}
		if got := keyFolds(tc.raw, tc.name); got != tc.fold {
			t.Errorf("keyFolds(%s, %s) = %v", tc.raw, tc.name, got)
		}
		// encoding/json is the reference for both.
		var m map[string]int
		if err := json.Unmarshal([]byte(`{`+tc.raw+`: 1}`), &m); err == nil {
			if _, ok := m[tc.name]; ok != tc.exact {
				t.Errorf("%s: encoding/json map key match %v", tc.raw, ok)
			}
		}
	}
}

func TestDecodeString(t *testing.T) {
	for _, raw := range []string{`""`, `"plain"`, `"a\"b"`, `"\u00e9\n"`, `"\ud800x"`, `"\uD83D\uDE00"`, "\"\xffa\"", `"\/"`} {
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		if got := decodeString(raw); got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
		if nonEmpty(raw) != (want != "") {
			t.Errorf("%s: nonEmpty %v", raw, nonEmpty(raw))
		}
	}
}

// differential compares every finder with the finder it replaced, on one
// input. It is the body of FuzzFindersAgainstLegacy and of the table test.
func differential(t *testing.T, s string) {
	t.Helper()
	if nesting(s) > maxNesting {
		// Deeper than the scanner reads: it must find nothing.
		if scansAsJSON(s) {
			t.Fatalf("accepted JSON nested %d deep", nesting(s))
		}
		return
	}
	if got, want := scansAsJSON(s), json.Valid([]byte(s)); got != want {
		t.Fatalf("valid: scanner %v, encoding/json %v", got, want)
	}
	trimmed := strings.TrimSpace(s)
	if trimmed != "" && (trimmed[0] == '[' || trimmed[0] == '{') {
		wantChunks, wantOK := legacyChunks(trimmed)
		docs, ok := findDocuments(trimmed)
		if ok != wantOK {
			t.Fatalf("documents found %v, legacy %v", ok, wantOK)
		}
		if ok {
			var chunks []string
			it := newArrayItems(docs)
			for it.next() {
				raw, ok := it.sc.textIn(documentFields, 0)
				if !ok {
					t.Fatal("a checked array does not read")
				}
				chunks = append(chunks, textOf(raw))
			}
			if len(chunks) != len(wantChunks) || (len(chunks) > 0 && !reflect.DeepEqual(chunks, wantChunks)) {
				t.Fatalf("chunks %q, legacy %q", chunks, wantChunks)
			}
		}
		r := New(Keys{}, Limits{MaxChunks: 1 << 20, MaxBytes: 1 << 30})
		got := r.mayHoldDocuments(s) && r.holdsDocuments(s)
		if want := legacyHoldsDocuments(s, 1<<30); got != want {
			t.Fatalf("holds documents %v, legacy %v", got, want)
		}
	}
	for _, fields := range [][]string{queryFields, answerFields, documentFields} {
		if got, want := textOf(findText(trimmed, fields)), legacyString([]byte(s), fields, 0); got != want {
			t.Fatalf("text in %v: %q, legacy %q", fields, got, want)
		}
	}
	if got, want := messagesText(s), legacyMessagesText(s); got != want && !repeatsParts(s) {
		t.Fatalf("messages text %q, legacy %q", got, want)
	}
}

// repeatsParts reports whether some object of a JSON text has two keys that
// encoding/json takes for the field "parts": it merged those arrays element
// by element, where messagesText takes the last (see messagesText).
func repeatsParts(s string) bool {
	dec := json.NewDecoder(strings.NewReader(s))
	type frame struct {
		object, key bool
		parts       int
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) || err != nil {
			return false
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			f := &stack[len(stack)-1]
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			if !f.key {
				f.key = true
				if k, ok := tok.(string); ok && strings.EqualFold(k, "parts") {
					if f.parts++; f.parts > 1 {
						return true
					}
				}
				continue
			}
			f.key = false
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

func TestFindersAgainstLegacy(t *testing.T) {
	inputs := append([]string(nil), jsonCorpus...)
	inputs = append(inputs, differentialSeeds...)
	for _, s := range inputs {
		t.Run("", func(t *testing.T) { differential(t, s) })
	}
}

var differentialSeeds = []string{
	`{"documents": [{"page_content": "a"}]}`,
	`[{"page_content": "a"}, "b", 3, {"document": {"content": "d"}}, {"kwargs": {"page_content": "k"}}]`,
	`{"outputs": [{"kwargs": {"page_content": "a"}}]}`,
	`{"output": {"documents": [{"text": "t"}]}, "documents": {"x": 1}}`,
	`{"documents": null, "outputs": [{"page_content": "a"}]}`,
	`{"documents": "no", "outputs": [{"page_content": "a"}]}`,
	`{"documents": [1], "documents": [{"page_content": "last"}]}`,
	`{"docu\u006dents": [{"page_content": "escaped key"}]}`,
	`{"documents": {"documents": {"documents": [{"page_content": "deep"}]}}}`,
	`{"documents": {"other": 1}, "outputs": [{"page_content": "fallback"}]}`,
	`[{"content": "", "text": "second"}, {"content": {"text": "nested"}}]`,
	`[{"document": {"document": {"document": {"content": "too deep"}}}}]`,
	`[{"content": "a", "content": 5}]`,
	`[{"page_content": "\u00e9\ud800\"x"}]`,
	`{"query": "q"}`, `{"inputs": {"question": "nested"}}`, `{"kwargs": {"input": "kw"}}`, `"a json string"`,
	`{"inputs": {"inputs": {"query": "deep"}}}`, `{"inputs": {"inputs": {"inputs": {"query": "too deep"}}}}`,
	`{"query": 5, "input": "second"}`, `{"outputs": {"answer": "42"}}`, `"done"`, `{"answer": ""}`,
	`[{"role":"assistant","parts":[{"type":"text","content":"Hi"},{"type":"tool_call","content":"x"},{"type":"text","content":"there"}]}]`,
	`[{"content": "no parts"}, {"parts": [], "content": "empty parts"}, {"parts": null, "content": "null parts"}]`,
	`[{"PARTS": [{"TYPE": "text", "Content": "folded"}]}]`,
	`[{"partſ": [{"type": "text", "content": "long s"}]}]`,
	`[{"parts": [{"type": "te\u0078t", "content": "escaped type"}]}]`,
	`[{"parts": [{"type": "text", "type": null, "content": "null keeps"}]}]`,
	`[{"parts": [{"type": 5, "content": "type error"}]}]`,
	`[{"parts": [{"type": "text", "content": "x"}]}, 7]`,
	`[{"parts": "x"}]`, `[{"parts": [null, {"type": "text", "content": "after null"}]}]`,
	`[{"content": 5}, {"content": "after a number"}]`, `null`, `[null, {"content": "c"}]`, `{"content": "obj"}`,
	`[{"parts": [{"type": "text", "content": "a"}], "parts": [{"content": "b"}]}]`,
}

func FuzzFindersAgainstLegacy(f *testing.F) {
	for _, s := range jsonCorpus {
		f.Add(s)
	}
	for _, s := range differentialSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return // the legacy finders are quadratic
		}
		differential(t, s)
	})
}

// plainRun finds the first quote, backslash or control byte at any offset,
// with any bytes around it.
func TestPlainRun(t *testing.T) {
	for _, stop := range []byte{'"', '\\', 0, 0x1f, '\n'} {
		for n := range 20 {
			for _, fill := range []byte{'a', 0x20, 0x21, 0x5b, 0x5d, 0x7f, 0x80, 0xff} {
				b := bytes.Repeat([]byte{fill}, 24)
				b[n] = stop
				if n > 0 {
					b[n-1] = 0x23 // just above '"'
				}
				for from := 0; from <= n; from++ {
					if got := plainRun(string(b), from); got != n {
						t.Fatalf("stop %#x at %d in %#x, from %d: %d", stop, n, fill, from, got)
					}
				}
			}
		}
	}
	if got := plainRun("abcdefghijklmnop", 3); got != 16 {
		t.Fatalf("no stop: %d", got)
	}
}
