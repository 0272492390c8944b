// Package doclinks checks the relative links of the repository's Markdown
// pages: that each names a file that exists and, with a #fragment, a heading
// of that page as GitHub anchors it. Moving a section from one page to
// another then cannot leave a link behind that leads nowhere.
package doclinks

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Anchor is the fragment GitHub gives a heading: its text as rendered
// (links reduced to their text, code spans to their content), lower-cased,
// with every character that is not a letter, a digit, a mark, a hyphen or an
// underscore dropped and each space made a hyphen. Pages with the same
// heading twice get "-1", "-2", … on the later ones (Headings does that).
func Anchor(heading string) string {
	text := inlineLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	fence      = regexp.MustCompile("^ {0,3}(```|~~~)")
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	// inlineLink matches [text](target) and ![alt](target); the text may
	// hold code spans, the target no spaces (an optional "title" follows).
	inlineLink = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]*)(?:\s+"[^"]*")?\)`)
	// refDefinition matches a reference definition: [label]: target.
	refDefinition = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(\S+)`)
)

// lines returns the lines of a Markdown page outside fenced code blocks,
// numbered from 1, and the page's number of lines.
func lines(page string) (map[int]string, int) {
	out := map[int]string{}
	inFence := ""
	all := strings.Split(page, "\n")
	for i, line := range all {
		if m := fence.FindStringSubmatch(line); m != nil {
			switch {
			case inFence == "":
				inFence = m[1]
			case inFence == m[1]:
				inFence = ""
			}
			continue
		}
		if inFence == "" {
			out[i+1] = line
		}
	}
	return out, len(all)
}

// Headings returns the anchors of a page's headings, with GitHub's suffixes
// for repeated ones.
func Headings(page string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	ls, count := lines(page)
	for n := 1; n <= count; n++ {
		m := atxHeading.FindStringSubmatch(ls[n])
		if m == nil {
			continue
		}
		a := Anchor(m[1])
		if k := seen[a]; k > 0 {
			seen[a] = k + 1
			a = fmt.Sprintf("%s-%d", a, k)
		} else {
			seen[a] = 1
		}
		anchors[a] = true
	}
	return anchors
}

// Link is a relative link of a page.
type Link struct {
	Line   int
	Target string // as written: a path, a #fragment, or both
}

// Links returns the relative links of a page (inline links, images and
// reference definitions) outside fenced code blocks and code spans. Links
// with a scheme (https:, mailto:) are left out. A link's text may wrap onto
// the next lines of its paragraph: each paragraph is read as one line, and
// a link is reported at the line it starts on.
func Links(page string) []Link {
	var out []Link
	add := func(line int, t string) {
		t = strings.TrimSuffix(strings.TrimPrefix(t, "<"), ">")
		if u, err := url.Parse(t); err == nil && u.Scheme != "" {
			return
		}
		out = append(out, Link{Line: line, Target: t})
	}
	ls, count := lines(page)
	var para strings.Builder
	var starts []int // the offset in para of each of its lines
	first := 0       // the page line of para's first line
	flush := func() {
		text := para.String()
		lineAt := func(off int) int {
			i := 0
			for i+1 < len(starts) && starts[i+1] <= off {
				i++
			}
			return first + i
		}
		// Code spans outside links' text are no links; those inside a
		// link's text stay part of it.
		pos := 0
		for {
			rest := text[pos:]
			loc := inlineLink.FindStringSubmatchIndex(rest)
			span := codeSpan.FindStringIndex(rest)
			if loc == nil {
				break
			}
			if span != nil && span[0] < loc[0] {
				pos += span[1]
				continue
			}
			add(lineAt(pos+loc[0]), rest[loc[4]:loc[5]])
			pos += loc[1]
		}
		para.Reset()
		starts = starts[:0]
	}
	for n := 1; n <= count; n++ {
		line, ok := ls[n]
		if !ok || strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if m := refDefinition.FindStringSubmatch(line); m != nil {
			flush()
			add(n, m[1])
			continue
		}
		if atxHeading.MatchString(line) || strings.HasPrefix(strings.TrimSpace(line), "|") {
			// A heading or a table row is a block of its own line.
			flush()
			first = n
			starts = append(starts, 0)
			para.WriteString(line)
			flush()
			continue
		}
		if para.Len() == 0 {
			first = n
		} else {
			para.WriteByte(' ')
		}
		starts = append(starts, para.Len())
		para.WriteString(line)
	}
	flush()
	return out
}

// Check returns one problem per relative link of the page at path (a file
// name relative to root, with slashes) that names no existing file or
// directory, leaves the repository, or names a heading the target page does
// not have.
func Check(root, path string) ([]string, error) {
	page, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, l := range Links(string(page)) {
		target, fragment, _ := strings.Cut(l.Target, "#")
		target, err := url.PathUnescape(target)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: %s: %v", path, l.Line, l.Target, err))
			continue
		}
		file := path
		if target != "" {
			file = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(path), target)))
			if file == ".." || strings.HasPrefix(file, "../") || filepath.IsAbs(target) {
				problems = append(problems, fmt.Sprintf("%s:%d: %s leaves the repository", path, l.Line, l.Target))
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(file))); err != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: no such file", path, l.Line, l.Target))
				continue
			}
		}
		if fragment == "" || !strings.HasSuffix(file, ".md") {
			continue
		}
		linked, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			return nil, err
		}
		if !Headings(string(linked))[fragment] {
			problems = append(problems, fmt.Sprintf("%s:%d: %s: %s has no heading #%s", path, l.Line, l.Target, file, fragment))
		}
	}
	return problems, nil
}
