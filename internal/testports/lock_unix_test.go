//go:build unix

package testports

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// A port another process was given is not handed out while that process
// runs, and is free for others once it has exited.
func TestOtherProcessesPortsAreNotHandedOut(t *testing.T) {
	if os.Getenv("TESTPORTS_HELPER") != "" {
		helper()
		return
	}
	claims = t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestOtherProcessesPortsAreNotHandedOut$")
	child.Env = append(os.Environ(), "TESTPORTS_HELPER=1", "TESTPORTS_CLAIMS="+claims)
	in, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	theirs := map[int]bool{}
	for _, f := range strings.Fields(line) {
		p, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("helper said %q", line)
		}
		theirs[p] = true
	}
	if len(theirs) != 20 {
		t.Fatalf("helper picked %v", line)
	}
	for p := range theirs {
		if ok, err := claim(p); err != nil || ok {
			t.Errorf("port %d, claimed by the running helper, claimed again: %v, %v", p, ok, err)
		}
	}
	in.Close() // the helper exits
	if err := child.Wait(); err != nil {
		t.Fatal(err)
	}
	for p := range theirs {
		if ok, err := claim(p); err != nil || !ok {
			t.Errorf("port %d not free after its claimant exited: %v, %v", p, ok, err)
		}
	}
}

// helper claims 20 ports, prints them and holds them until its input closes.
func helper() {
	claims = os.Getenv("TESTPORTS_CLAIMS")
	var ports []string
	for range 20 {
		p, err := Pick()
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		ports = append(ports, strconv.Itoa(p))
	}
	fmt.Println(strings.Join(ports, " "))
	bufio.NewReader(os.Stdin).ReadString('\n')
	os.Exit(0)
}
