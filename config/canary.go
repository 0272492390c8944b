package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ragprecision/ragprecision/internal/evalset"
)

// Canary configures the drift canary: labelled retrievals that the judge
// re-judges every interval, without its verdict cache, so that a judge that
// changed (a provider updating a model under the same name, edited
// criteria) shows as falling agreement with the labels, apart from
// retrieval quality (docs/OPERATING.md, "Trusting the judge").
type Canary struct {
	// File is a JSON Lines file of labelled retrievals in the format of
	// docs/EVAL_FORMAT.md. Default "": no canary.
	File string `mapstructure:"file"`
	// Interval is how often the canary runs; its retrievals are spread
	// over it. Default 1h.
	Interval time.Duration `mapstructure:"interval"`
	// MaxRetrievals is how many of the file's retrievals a run judges, the
	// next ones each run, round the file. Default 50.
	MaxRetrievals int `mapstructure:"max_retrievals"`
}

// hasReference reports whether r has a text of one of sources.
func hasReference(r evalset.Retrieval, sources []string) bool {
	for _, s := range sources {
		if (s == SourceReference && r.Reference != "") || (s == SourceAnswer && r.Answer != "") || (s == SourceQuery && r.Query != "") {
			return true
		}
	}
	return false
}

func defaultCanary() Canary { return Canary{Interval: time.Hour, MaxRetrievals: 50} }

// Enabled reports whether a canary file is set.
func (c *Canary) Enabled() bool { return c.File != "" }

// LoadCanary reads the canary file: every retrieval of it, in file order.
func LoadCanary(path string) ([]evalset.Retrieval, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []evalset.Retrieval
	r := evalset.NewReader(f)
	for {
		ret, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ret)
	}
	if len(out) == 0 {
		return nil, errors.New("no labelled retrieval in the file")
	}
	return out, nil
}

// problems reports what is wrong with the canary of section (its file is
// read and parsed, so that a missing or malformed one is refused at
// start-up); each retrieval needs one of sources to judge against.
func (c *Canary) problems(section string, sources []string) []error {
	if !c.Enabled() {
		return nil
	}
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	key := func(k string) string { return section + ".canary." + k }
	retrievals, err := LoadCanary(c.File)
	if err != nil {
		add("%s: %s: %v", key("file"), c.File, err)
	}
	for i, r := range retrievals {
		if !hasReference(r, sources) {
			add("%s: %s: retrieval %d (%q) has none of reference_sources %v to judge against", key("file"), c.File, i+1, r.ID, sources)
			break
		}
	}
	durationAtLeast(add, key("interval"), c.Interval, time.Second)
	if c.MaxRetrievals < 1 {
		add("%s: must be at least 1, got %d", key("max_retrievals"), c.MaxRetrievals)
	}
	return errs
}
