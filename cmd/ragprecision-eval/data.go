package main

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ragprecision/ragprecision/internal/evalset"
	"github.com/ragprecision/ragprecision/internal/hotpotqa"
)

// Data formats -format accepts.
const (
	formatAuto       = "auto"
	formatRetrievals = "retrievals" // the evalset format
	formatHotpotQA   = "hotpotqa"
	formatTSV        = "tsv"
	formatCSV        = "csv"
)

// handbookSet is the small labelled set shipped with the command, measured
// when no -data is given and the HotpotQA sample is not found.
//
//go:embed testdata/handbook.jsonl
var handbookSet []byte

const handbookName = "the built-in handbook set (cmd/ragprecision-eval/testdata/handbook.jsonl)"

// dataset is an opened source of labelled retrievals.
type dataset struct {
	name        string // what the report calls it
	format      string
	attribution string // to print next to any result, when the data needs one
	src         evalset.Source
	close       func() error
}

// hotpotqaHelp says how to get the HotpotQA sample.
var hotpotqaHelp = `To measure on HotpotQA, get the IRCoT authors' HotpotQA dev subsample
(processed_data/hotpotqa/dev_subsampled.jsonl, fetched by ./download/processed_data.sh in
https://github.com/StonyBrookNLP/ircot) and put it at ../shared/data/` + hotpotqa.FileName + `
beside this repository, or set $` + hotpotqa.EnvPath + ` to its path, or pass -data.`

// openData opens path in format. With no path it opens the HotpotQA sample
// when it can be found, and otherwise the built-in handbook set, saying so
// on stderr.
func openData(path, format string, stderr io.Writer) (dataset, error) {
	if path == "" {
		p, err := hotpotqa.DefaultPath()
		if errors.Is(err, hotpotqa.ErrNotFound) {
			fmt.Fprintf(stderr, "ragprecision-eval: no HotpotQA sample (%v).\n%s\nMeasuring on %s instead: a few dozen retrievals, enough to see the command work, too few for figures to quote.\n\n",
				err, hotpotqaHelp, handbookName)
			return dataset{name: handbookName, format: formatRetrievals,
				src: evalset.NewReader(bytes.NewReader(handbookSet)), close: func() error { return nil }}, nil
		}
		if err != nil {
			return dataset{}, err
		}
		path, format = p, formatHotpotQA
	}
	f, err := os.Open(path)
	if err != nil {
		return dataset{}, err
	}
	if format == formatAuto {
		if format, err = detectFormat(path, f); err != nil {
			f.Close()
			return dataset{}, err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			f.Close()
			return dataset{}, err
		}
	}
	d := dataset{name: path, format: format, close: f.Close}
	switch format {
	case formatRetrievals:
		d.src = evalset.NewReader(f)
	case formatHotpotQA:
		d.src = hotpotqa.NewSource(f)
		d.attribution = hotpotqa.Attribution
	case formatTSV, formatCSV:
		delim := evalset.TSV
		if format == formatCSV {
			delim = evalset.CSV
		}
		tr, err := evalset.NewTableReader(f, delim)
		if err != nil {
			f.Close()
			return dataset{}, fmt.Errorf("%s: %w", path, err)
		}
		d.src = tr
	default:
		f.Close()
		return dataset{}, fmt.Errorf("-format %q: want %s", format, strings.Join([]string{formatAuto, formatRetrievals, formatHotpotQA, formatTSV, formatCSV}, ", "))
	}
	d.src = namedSource{d.src, path}
	return d, nil
}

// detectFormat tells the format of a file: tables by their extension, JSON
// Lines by the keys of the first object.
func detectFormat(path string, r io.Reader) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".tsv", ".tab":
		return formatTSV, nil
	case ".csv":
		return formatCSV, nil
	}
	// The first JSON value after any comment lines: HotpotQA records may
	// span lines when pretty-printed, so it is decoded rather than cut at a
	// newline.
	br := bufio.NewReader(r)
	for {
		b, err := br.Peek(1)
		if err != nil {
			break
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			_, _ = br.ReadByte()
			continue
		case '#':
			_, _ = br.ReadBytes('\n')
			continue
		}
		var keys map[string]json.RawMessage
		if json.NewDecoder(br).Decode(&keys) == nil {
			if _, ok := keys["chunks"]; ok {
				return formatRetrievals, nil
			}
			if _, ok := keys["contexts"]; ok {
				return formatHotpotQA, nil
			}
		}
		break
	}
	return "", fmt.Errorf("%s: cannot tell its format from the first line (want a JSON object with \"chunks\", a HotpotQA record with \"contexts\", or a .tsv/.csv table); set -format", path)
}

// namedSource prefixes read errors with the file's name.
type namedSource struct {
	evalset.Source
	name string
}

func (s namedSource) Next() (evalset.Retrieval, error) {
	r, err := s.Source.Next()
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%s: %w", s.name, err)
	}
	return r, err
}
