package config

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/confmap"
)

// This file decodes the processor's YAML so that a bad config is refused
// with every problem at once: the collector's decoder stops at the first key
// it cannot decode (`'max_wait' time: unknown unit`, naming neither the
// value nor what is allowed) and Validate never runs. On that path each key
// is decoded alone, and every problem is reported in the words of this
// package, with the key, the value and what is allowed. Keys that exist
// nowhere in Config are refused too, also where the decoder lets them pass.

// rawConfig is Config without its Unmarshal method, for the decoder.
type rawConfig Config

// Unmarshal decodes the processor's section of the collector's YAML. A
// config that decodes, with no unknown key, is left to Validate, as the
// collector does; any other is refused with every key that cannot be
// decoded, every unknown key, and every problem Validate finds in the rest.
func (c *Config) Unmarshal(conf *confmap.Conf) error {
	var problems []error
	bad := map[string]bool{}
	if err := conf.Unmarshal((*rawConfig)(c)); err != nil {
		problems, bad = c.decodeKeyByKey(conf)
		if len(problems) == 0 {
			// Nothing fails alone: report the decoder's own words.
			return err
		}
	}
	// The judge's HTTP client settings decode ignoring keys they do not
	// know (confighttp does so for every component that squashes them), so
	// a misspelt key under judge: would pass unnoticed.
	for _, k := range conf.AllKeys() {
		path := strings.Split(k, confmap.KeyDelimiter)
		if _, _, known := keyType(reflect.TypeFor[Config](), path); !known {
			if key, problem := decodeProblem(path, conf.Get(k), nil); !bad[key] {
				problems = append(problems, problem)
				bad[key] = true
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	if verr := c.Validate(); verr != nil {
		for _, line := range strings.Split(verr.Error(), "\n") {
			key, _, _ := strings.Cut(line, ": ")
			if !bad[key] {
				problems = append(problems, errors.New(line))
			}
		}
	}
	return errors.Join(problems...)
}

// decodeKeyByKey decodes every key of conf on its own, reports those that
// fail, and decodes the others into c. bad holds the failed keys, dotted.
func (c *Config) decodeKeyByKey(conf *confmap.Conf) (problems []error, bad map[string]bool) {
	bad = map[string]bool{}
	keys := conf.AllKeys()
	sort.Strings(keys)
	good := copyConf(conf)
	for _, k := range keys {
		probe := copyConf(conf)
		for _, other := range keys {
			if other != k {
				probe.Delete(other)
			}
		}
		if err := probe.Unmarshal((*rawConfig)(Default())); err != nil {
			path := strings.Split(k, confmap.KeyDelimiter)
			key, problem := decodeProblem(path, conf.Get(k), err)
			if !bad[key] {
				problems = append(problems, problem)
				bad[key] = true
			}
			good.Delete(k)
		}
	}
	if err := good.Unmarshal((*rawConfig)(c)); err != nil {
		problems = append(problems, err)
	}
	return problems, bad
}

// copyConf copies conf, keeping what ${env:...} values were written as.
func copyConf(conf *confmap.Conf) *confmap.Conf {
	c := confmap.New()
	_ = c.Merge(conf) // merging into an empty Conf cannot fail
	return c
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	opaqueType   = reflect.TypeFor[configopaque.String]()
)

// decodeProblem says why the value at path could not be decoded (err, nil
// for a key that does not exist): the key, the value (unless it is a
// secret) and what the key takes. It returns the key it reports, dotted.
func decodeProblem(path []string, value any, err error) (string, error) {
	t, depth, known := keyType(reflect.TypeFor[Config](), path)
	key := strings.Join(path[:depth], ".")
	if !known {
		parent := reflect.TypeFor[Config]()
		if depth > 0 {
			parent, _, _ = keyType(parent, path[:depth])
		}
		allowed := keysOf(parent)
		msg := strings.Join(path[:depth+1], ".") + ": unknown key"
		if near := closest(path[depth], allowed); len(near) > 0 {
			for i, n := range near {
				near[i] = strings.Join(append(path[:depth:depth], n), ".")
			}
			msg += " (did you mean " + strings.Join(near, " or ") + "?)"
		}
		where := "here"
		if depth > 0 {
			where = "under " + key
		}
		return strings.Join(path[:depth+1], "."), fmt.Errorf("%s; allowed %s: %s", msg, where, strings.Join(allowed, ", "))
	}
	got := fmt.Sprintf("%q", fmt.Sprint(value))
	if depth < len(path) {
		// A map where a single value belongs: show the key that takes it.
		got = "a map"
	}
	if t == opaqueType || (t.Kind() == reflect.Map && t.Elem() == opaqueType) {
		got = "a value (not shown: it is a secret)"
	}
	switch {
	case t == durationType:
		return key, fmt.Errorf("%s: %s is not a duration; write a number and a unit (ns, us, ms, s, m, h), e.g. %s: 30s", key, got, path[len(path)-1])
	case t.Kind() == reflect.Bool:
		return key, fmt.Errorf("%s: must be true or false, got %s", key, got)
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return key, fmt.Errorf("%s: must be a whole number, got %s", key, got)
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return key, fmt.Errorf("%s: must be a number, got %s", key, got)
	case t.Kind() == reflect.String:
		return key, fmt.Errorf("%s: must be a string, got %s", key, got)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return key, fmt.Errorf("%s: must be a list of strings, got %s", key, got)
	case t.Kind() == reflect.Struct:
		return key, fmt.Errorf("%s: must be a map with the keys %s, got %s", key, strings.Join(keysOf(t), ", "), got)
	}
	if err == nil {
		return key, fmt.Errorf("%s: %s is not allowed", key, got)
	}
	return key, fmt.Errorf("%s: %s is not allowed: %s", key, got, decoderMessage(err))
}

// decoderMessage is the decoder's error without its framing.
func decoderMessage(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, "\n"); i >= 0 {
		msg = msg[i+1:]
	}
	if strings.HasPrefix(msg, "'") {
		if i := strings.Index(msg[1:], "' "); i >= 0 {
			msg = msg[i+3:]
		}
	}
	return strings.TrimSpace(msg)
}

// keyType follows path through t's mapstructure keys. It returns the type
// at the deepest key found, how many keys of path it followed, and false
// when path[depth] is not a key of a struct (a key that does not exist).
// Past a key that holds a single value (a duration, a number, a list) it
// stops, known, with depth < len(path).
func keyType(t reflect.Type, path []string) (reflect.Type, int, bool) {
	for depth, name := range path {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		t = optionalValue(t)
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldByKey(t, name)
			if !ok {
				return t, depth, false
			}
			t = f
		case reflect.Map:
			t = t.Elem()
		default:
			return t, depth, true
		}
	}
	return t, len(path), true
}

// optionalValue is T for a configoptional.Optional[T], whose keys are T's;
// t for any other type.
func optionalValue(t reflect.Type) reflect.Type {
	if t.Kind() != reflect.Struct || t.PkgPath() != "go.opentelemetry.io/collector/config/configoptional" {
		return t
	}
	if get, ok := reflect.PointerTo(t).MethodByName("Get"); ok && get.Type.NumOut() == 1 && get.Type.Out(0).Kind() == reflect.Pointer {
		return get.Type.Out(0).Elem()
	}
	return t
}

// fieldByKey finds the type of the field of struct t that key decodes
// into, looking into squashed fields.
func fieldByKey(t reflect.Type, key string) (reflect.Type, bool) {
	var remain reflect.Type
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		switch {
		case hasOption(opts, "remain"):
			// It takes every key its struct does not name.
			remain = f.Type
		case hasOption(opts, "squash") || (f.Anonymous && name == ""):
			if ft, ok := fieldByKey(f.Type, key); ok {
				return ft, true
			}
		case name == "-" || !f.IsExported():
		case strings.EqualFold(name, key) || (name == "" && strings.EqualFold(f.Name, key)):
			return f.Type, true
		}
	}
	if remain != nil && remain.Kind() == reflect.Map {
		return remain.Elem(), true
	}
	return nil, false
}

// hasOption reports whether a mapstructure tag's options hold opt.
func hasOption(opts, opt string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// keysOf lists the keys struct t takes, sorted.
func keysOf(t reflect.Type) []string {
	var keys []string
	for i := 0; t.Kind() == reflect.Struct && i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		switch {
		case hasOption(opts, "remain"):
		case hasOption(opts, "squash") || (f.Anonymous && name == ""):
			keys = append(keys, keysOf(f.Type)...)
		case name == "-" || !f.IsExported():
		case name != "":
			keys = append(keys, name)
		default:
			keys = append(keys, strings.ToLower(f.Name))
		}
	}
	sort.Strings(keys)
	return keys
}
