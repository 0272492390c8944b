// Package portability type-checks the module as the Go toolchain would build
// it for another system (GOOS and GOARCH), without compiling anything: `go
// list` picks each package's files for that system, and go/types checks
// them. Cross-compiling would say the same about the module's code, but
// compiles every dependency for each system first, which costs minutes on a
// cold build cache; here dependencies are checked for their declarations
// only, which is all the module's code sees of them.
package portability

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// Target is a system to build for.
type Target struct{ GOOS, GOARCH string }

func (t Target) String() string { return t.GOOS + "/" + t.GOARCH }

// listedPackage is what `go list -json` says of a package.
type listedPackage struct {
	ImportPath string // with a test variant's " [p.test]"
	Dir        string
	GoFiles    []string // a test variant's include its _test.go files
	CgoFiles   []string
	Imports    []string          // resolved: vendored and test variants
	ImportMap  map[string]string // import path as written -> Imports entry
	Module     *struct {
		Main      bool
		GoVersion string
	}
	Error *struct{ Err string }
}

// own reports whether the package belongs to the main module, which is
// checked in full.
func (p *listedPackage) own() bool { return p.Module != nil && p.Module.Main }

// Report is the outcome of one Check.
type Report struct {
	Target Target
	// Checked counts the main module's packages checked in full (test
	// variants included), Dependencies the packages checked for their
	// declarations.
	Checked, Dependencies int
	// Errors are what would fail `go build` or `go vet` of the patterns
	// for Target: a package go list cannot load for it, or a type error.
	Errors []error
}

// Check type-checks the packages patterns name in the module at dir, with
// their tests, for target; cgo is off, as when cross-compiling.
func Check(ctx context.Context, dir string, target Target, patterns ...string) (*Report, error) {
	pkgs, err := list(ctx, dir, target, patterns)
	if err != nil {
		return nil, err
	}
	rep := &Report{Target: target}
	byPath := map[string]*checked{}
	for _, p := range pkgs {
		// The generated main of a test binary: nothing of the module's.
		if strings.HasSuffix(p.ImportPath, ".test") {
			continue
		}
		byPath[p.ImportPath] = &checked{listed: p, done: make(chan struct{})}
		if p.own() {
			rep.Checked++
		} else {
			rep.Dependencies++
		}
	}
	sizes := types.SizesFor("gc", target.GOARCH)
	if sizes == nil {
		return nil, fmt.Errorf("no type sizes for GOARCH %s", target.GOARCH)
	}
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, c := range byPath {
		wg.Go(func() {
			defer close(c.done)
			for _, imp := range c.listed.Imports {
				if dep := byPath[imp]; dep != nil {
					<-dep.done
				}
			}
			slots <- struct{}{}
			defer func() { <-slots }()
			c.check(byPath, sizes)
		})
	}
	wg.Wait()
	// A package's files are checked again in its test variant: each error once.
	seen := map[string]bool{}
	for _, p := range pkgs {
		c := byPath[p.ImportPath]
		if c == nil {
			continue
		}
		errs := c.errs
		if p.Error != nil {
			errs = append([]error{fmt.Errorf("%s: %s", p.ImportPath, strings.TrimSpace(p.Error.Err))}, errs...)
		}
		for _, err := range errs {
			if !seen[err.Error()] {
				seen[err.Error()] = true
				rep.Errors = append(rep.Errors, err)
			}
		}
	}
	return rep, nil
}

// goCommand is the go command of the toolchain that built this binary. A
// -trimpath build (make test's) does not know its GOROOT: then the go on the
// PATH, where go test and go run put their own toolchain's first.
func goCommand() string {
	if root := runtime.GOROOT(); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	return "go"
}

// list runs `go list -deps -test` for target in dir.
func list(ctx context.Context, dir string, target Target, patterns []string) ([]*listedPackage, error) {
	args := []string{"list", "-e", "-deps", "-test",
		"-json=ImportPath,Dir,GoFiles,CgoFiles,Imports,ImportMap,Module,Error"}
	cmd := exec.CommandContext(ctx, goCommand(), append(args, patterns...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS="+target.GOOS, "GOARCH="+target.GOARCH, "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list for %s: %v\n%s", target, err, stderr.String())
	}
	var pkgs []*listedPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		p := new(listedPackage)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("go list for %s: %w", target, err)
		}
		pkgs = append(pkgs, p)
	}
}

// checked is a package being type-checked; done is closed once types is
// set (nil if the package could not be checked) and errs is final.
type checked struct {
	listed *listedPackage
	done   chan struct{}
	types  *types.Package
	errs   []error
}

func (c *checked) check(byPath map[string]*checked, sizes types.Sizes) {
	p := c.listed
	if p.ImportPath == "unsafe" {
		c.types = types.Unsafe
		return
	}
	if len(p.CgoFiles) > 0 {
		c.errs = append(c.errs, fmt.Errorf("%s: cgo files with CGO_ENABLED=0: %v", p.ImportPath, p.CgoFiles))
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			c.errs = append(c.errs, err)
			return
		}
		files = append(files, f)
	}
	conf := types.Config{
		Sizes: sizes,
		// The module's code sees its dependencies' declarations only;
		// their bodies compile wherever they are published for.
		IgnoreFuncBodies:         !p.own(),
		DisableUnusedImportCheck: !p.own(),
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if mapped, ok := p.ImportMap[path]; ok {
				path = mapped
			}
			dep := byPath[path]
			if dep == nil || dep.types == nil {
				return nil, fmt.Errorf("%s not loaded", path)
			}
			return dep.types, nil
		}),
		Error: func(err error) {
			if len(c.errs) < 20 {
				c.errs = append(c.errs, err)
			}
		},
	}
	if p.Module != nil && p.Module.GoVersion != "" {
		conf.GoVersion = "go" + p.Module.GoVersion
	}
	// With errors, the package is still usable by its importers.
	pkg, _ := conf.Check(strings.TrimSuffix(p.ImportPath, testSuffix(p.ImportPath)), fset, files, nil)
	c.types = pkg
}

// testSuffix is the " [p.test]" of a test variant's ImportPath, or "".
func testSuffix(importPath string) string {
	if i := strings.Index(importPath, " ["); i >= 0 {
		return importPath[i:]
	}
	return ""
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
