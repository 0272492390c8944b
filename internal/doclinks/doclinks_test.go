package doclinks

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// GitHub's anchors of headings of this repository's pages, as GitHub
// renders them.
func TestAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"Sources, as tested":                                "sources-as-tested",
		"builtin:lexical":                                   "builtinlexical",
		"Choosing `sampling_percentage`":                    "choosing-sampling_percentage",
		"The rank profile and the retriever's depth":        "the-rank-profile-and-the-retrievers-depth",
		"`judge_version`: a judge change starts new series": "judge_version-a-judge-change-starts-new-series",
		"Retrieval outcomes: what to do first":              "retrieval-outcomes-what-to-do-first",
		"[0.1.0] - 2026-12-01":                              "010---2026-12-01",
		"Add ragprecision to your own collector":            "add-ragprecision-to-your-own-collector",
		"RAGJudgeDown":                                      "ragjudgedown",
		"Licence":                                           "licence",
	} {
		if got := Anchor(heading); got != want {
			t.Errorf("Anchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

func TestHeadingsSkipCodeAndNumberRepeats(t *testing.T) {
	page := "# Title\n\n## Notes\n\n```sh\n# not a heading\n```\n\n## Notes ##\n\n## Notes\n"
	got := Headings(page)
	want := map[string]bool{"title": true, "notes": true, "notes-1": true, "notes-2": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Headings = %v, want %v", got, want)
	}
}

func TestLinks(t *testing.T) {
	page := strings.Join([]string{
		"See [`examples/demo.yaml`](examples/demo.yaml) and [Alerts](docs/OPERATING.md#alerts).",
		"Not `[code](span.md)`; [web](https://example.com/x.md); ![img](pic.png \"title\")",
		"```",
		"[fenced](fenced.md)",
		"```",
		"[ref]: ../LICENSE",
		"[alpha]: https://example.com",
		"[below](#a-section)",
		"",
		"A link whose text [wraps onto",
		"the next line](docs/WRAPPED.md) is read,",
		"| a table | [cell](table.md) |",
	}, "\n")
	want := []Link{
		{1, "examples/demo.yaml"}, {1, "docs/OPERATING.md#alerts"},
		{2, "pic.png"}, {6, "../LICENSE"}, {8, "#a-section"}, {10, "docs/WRAPPED.md"}, {12, "table.md"},
	}
	if got := Links(page); !reflect.DeepEqual(got, want) {
		t.Errorf("Links = %v, want %v", got, want)
	}
}

// Check reports each kind of dangling link, and nothing for good ones.
func TestCheckFindsDanglingLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/GUIDE.md", "# Guide\n\n## Health checks and probes\n")
	write("examples/x.yaml", "a: b\n")
	write("README.md", strings.Join([]string{
		"# Front",
		"[ok](docs/GUIDE.md#health-checks-and-probes) [dir](examples) [file](examples/x.yaml) [self](#front)",
		"[gone](docs/MISSING.md)",
		"[moved](docs/GUIDE.md#scaling-out)",
		"[below](#scaling-out)",
		"[out](../elsewhere.md)",
	}, "\n"))
	got, err := Check(root, "README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md:3: docs/MISSING.md: no such file",
		"README.md:4: docs/GUIDE.md#scaling-out: docs/GUIDE.md has no heading #scaling-out",
		"README.md:5: #scaling-out: README.md has no heading #scaling-out",
		"README.md:6: ../elsewhere.md leaves the repository",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Check =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRepositoryLinks checks every relative link of the repository's own
// Markdown pages (the README, docs/, the component's README, the changelog,
// and any other), so that moving a section cannot leave a link behind.
func TestRepositoryLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	var pages []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			// Build output, dependencies and test data are not the
			// repository's pages.
			if path != root && (strings.HasPrefix(name, ".") || name == "build" || name == "bin" || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			pages = append(pages, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"README.md", "docs/OPERATING.md", "processor/ragprecisionprocessor/README.md"} {
		found := false
		for _, p := range pages {
			found = found || p == want
		}
		if !found {
			t.Fatalf("%s was not among the pages checked: %v", want, pages)
		}
	}
	for _, p := range pages {
		problems, err := Check(root, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, problem := range problems {
			t.Error(problem)
		}
	}
}
