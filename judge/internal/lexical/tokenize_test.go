package lexical

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode"
)

// testToken is a token with its texts as strings.
type testToken struct {
	raw, word, stem  string
	upper, stop, brk bool
}

// tokenize is tokenizer.tokenize with fresh buffers, the tokens appended to
// dst[:0] with their texts.
func tokenize(dst []testToken, s string, maxRunes int) []testToken {
	var z tokenizer
	dst = dst[:0]
	for _, t := range z.tokenize(s, maxRunes) {
		dst = append(dst, testToken{
			raw: t.rawIn(s), word: string(z.word(&t)), stem: string(z.stem(&t)),
			upper: t.upper, stop: t.stop, brk: t.brk,
		})
	}
	return dst
}

// stem is the stem stemLen describes, as a string.
func stem(w string) string {
	n, y := stemLen(w)
	if y {
		return w[:n] + "y"
	}
	return w[:n]
}

// IsStopWord is isStopWord for a string.
func IsStopWord(w string) bool { return isStopWord([]byte(w), hashWord(w)) }

func words(toks []testToken) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.word
	}
	return out
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", []string{}},
		{"  ,;: ", []string{}},
		{"Chief of Protocol", []string{"chief", "of", "protocol"}},
		{"Hollywood's number-one box-office draw.", []string{"hollywood", "s", "number", "one", "box", "office", "draw"}},
		{"can seat 3,677 people, 1.5 km away, in 1998.", []string{"can", "seat", "3,677", "people", "1.5", "km", "away", "in", "1998"}},
		{"a,b 1,a", []string{"a", "b", "1", "a"}},
		{"Androscoggin Bank Colisée", []string{"androscoggin", "bank", "colisée"}},
		{"ÉCOLE Straße İstanbul", []string{"école", "straße", "istanbul"}},
		{"Kiss & Tell (1945 film)", []string{"kiss", "tell", "1945", "film"}},
		{"東京 タワー", []string{"東京", "タワー"}},
		{"na\u0308ive", []string{"na\u0308ive"}}, // combining diaeresis stays in the word
		{"bad\xffutf8\xfe\xfd", []string{"bad", "utf8"}},
		{"tab\tnew\nline", []string{"tab", "new", "line"}},
	}
	for _, tc := range tests {
		if got := words(tokenize(nil, tc.in, MaxChunkRunes)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("tokenize(nil, %q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTokenizeFlags(t *testing.T) {
	toks := tokenize(nil, `Shirley Temple: Shirley "Uncle" Temple-Black (April 1928) was the`, MaxChunkRunes)
	type flags struct {
		word             string
		upper, stop, brk bool
	}
	want := []flags{
		{"shirley", true, false, false},
		{"temple", true, false, false},
		{"shirley", true, false, true}, // after ':'
		{"uncle", true, false, false},  // quotes join
		{"temple", true, false, false},
		{"black", true, false, false}, // hyphens join
		{"april", true, false, true},  // after '('
		{"1928", true, false, false},  // digits count as capitalised
		{"was", false, true, true},    // after ')'
		{"the", false, true, false},
	}
	if len(toks) != len(want) {
		t.Fatalf("got %d tokens, want %d: %q", len(toks), len(want), words(toks))
	}
	for i, w := range want {
		got := flags{toks[i].word, toks[i].upper, toks[i].stop, toks[i].brk}
		if got != w {
			t.Errorf("token %d = %+v, want %+v", i, got, w)
		}
	}
	if toks[0].raw != "Shirley" {
		t.Errorf("raw = %q, want the original case", toks[0].raw)
	}
}

func TestTokenizeCap(t *testing.T) {
	s := strings.Repeat("word ", 100) // 500 runes
	if got := len(tokenize(nil, s, 12)); got != 3 {
		t.Errorf("12 runes: %d tokens, want 3 (the last cut to \"wo\")", got)
	}
	if got := len(tokenize(nil, s, 10)); got != 2 {
		t.Errorf("10 runes: %d tokens, want 2", got)
	}
	if got := len(tokenize(nil, s, 9)); got != 2 {
		t.Errorf("9 runes: %d tokens, want 2 (the last cut to \"wor\")", got)
	}
	if got := len(tokenize(nil, s, MaxChunkRunes)); got != 100 {
		t.Errorf("no cut: %d tokens, want 100", got)
	}
}

func TestStem(t *testing.T) {
	tests := map[string]string{
		"films":    "film",
		"parties":  "party",
		"series":   "sery", // Harman's rule; harmless, as query and chunk agree
		"movies":   "movy",
		"heroes":   "heroe",
		"boxes":    "boxe",
		"glass":    "glass",
		"paris":    "paris",
		"campus":   "campus",
		"is":       "is",
		"gas":      "gas",
		"toes":     "toe",
		"album":    "album",
		"albums":   "album",
		"species":  "specy",
		"athletes": "athlete",
	}
	for in, want := range tests {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsStopWord(t *testing.T) {
	for _, w := range []string{"the", "of", "what", "who", "yes", "no", "s", "and"} {
		if !IsStopWord(w) {
			t.Errorf("%q is not a stop word", w)
		}
	}
	for _, w := range []string{"protocol", "temple", "film", "1998", "The"} {
		if IsStopWord(w) {
			t.Errorf("%q is a stop word", w)
		}
	}
}

// IsStopWord skips the lookup for words longer than maxStopWordLen.
func TestMaxStopWordLen(t *testing.T) {
	longest := 0
	for _, w := range stopWords {
		longest = max(longest, len(w))
	}
	if longest != maxStopWordLen {
		t.Errorf("longest stop word has %d bytes, maxStopWordLen is %d", longest, maxStopWordLen)
	}
}

// asciiWordBytes counts the letters and digits a byte at a time would.
func TestASCIIWordBytes(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 1; pos < 8; pos++ {
			b := []byte("abcdefgh" + "ijk")
			b[pos] = byte(c)
			want := pos
			if isASCIIWordByte(byte(c)) {
				want = 8
			}
			if got := asciiWordBytes(string(b), 0); got != want {
				t.Errorf("byte %#x at %d: %d word bytes, want %d", c, pos, got, want)
			}
		}
	}
	for _, s := range []string{"AZaz09Zz", "a@[`{/:Z", "a", "ab c"} {
		want := 0
		for want < len(s) && want < 8 && isASCIIWordByte(s[want]) {
			want++
		}
		if len(s) < 8 {
			want = 1
		}
		if got := asciiWordBytes(s, 0); got != want {
			t.Errorf("%q: %d, want %d", s, got, want)
		}
	}
}

// A chunk's words are lower-cased and hashed by lowerHash, eight ASCII bytes
// at a time; the query's and the reference's by appendLower and hashWord. A
// word found in both must come out the same from each, or it never matches.
func TestLowerHashIsAppendLowerThenHashWord(t *testing.T) {
	texts := []string{}
	for n := 1; n <= 25; n++ { // every length, and every position of the end in a block
		w := strings.Repeat("AbCdEfGh1Z", 3)[:n]
		texts = append(texts, w, w+" tail", "x "+w+",Y", w+"É")
	}
	rng := rand.New(rand.NewPCG(6, 6))
	for range 2000 {
		texts = append(texts, randomText(rng, rng.IntN(20)))
	}
	var dst []byte // reused, as scan reuses it
	for _, text := range texts {
		words := wordReader{s: text}
		for {
			start, end, _, ascii := words.next()
			if start < 0 {
				break
			}
			h := lowerHash(&dst, text, start, end, ascii)
			want := appendLower(nil, text[start:end], ascii)
			if string(dst) != string(want) || h != hashWord(want) {
				t.Fatalf("%q in %q: lowerHash gives %q %#x, appendLower and hashWord %q %#x",
					text[start:end], text, dst, h, want, hashWord(want))
			}
			if string(want) != strings.ToLower(text[start:end]) {
				t.Fatalf("%q: appendLower gives %q, strings.ToLower %q", text[start:end], want, strings.ToLower(text[start:end]))
			}
		}
	}
}

func TestGeneralPunctuationIsNoWordRune(t *testing.T) {
	for r := rune(generalPunctuation); r <= generalPunctuationEnd; r++ {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) {
			t.Errorf("%U is a word rune", r)
		}
	}
}
