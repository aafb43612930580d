//go:build linux

package web

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// clientProcEnv makes the test binary a client process: it runs Objects
// against the URL in it and prints the Result as JSON, as h2load runs in
// its own process.
const clientProcEnv = "KQBENCH_WEB_CLIENT_PROCESS"

func TestMain(m *testing.M) {
	if spec := os.Getenv(clientProcEnv); spec != "" {
		os.Exit(clientProcess(spec))
	}
	os.Exit(m.Run())
}

type clientProcSpec struct {
	URL  string
	Opts ObjectsOptions
}

func clientProcess(spec string) int {
	var s clientProcSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintf(os.Stderr, "$%s: %v\n", clientProcEnv, err)
		return 2
	}
	_, ctls, err := loadTLS()
	var c *Client
	if err == nil {
		c, err = H2TLSClient(s.URL, ctls, Config{})
	}
	if err == nil {
		var r Result
		r, err = Objects(context.Background(), c, s.Opts)
		if err == nil {
			err = json.NewEncoder(os.Stdout).Encode(r)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// runClientProcess runs Objects in a child process (started inside do).
func runClientProcess(url string, o ObjectsOptions, do func(func() error) error) (Result, error) {
	spec, _ := json.Marshal(clientProcSpec{URL: url, Opts: o})
	var out []byte
	err := do(func() (err error) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), clientProcEnv+"="+string(spec))
		cmd.Stderr = os.Stderr
		out, err = cmd.Output()
		return err
	})
	var r Result
	if err != nil {
		return r, fmt.Errorf("the client process: %w", err)
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return r, fmt.Errorf("the client process printed %q: %w", out, err)
	}
	return r, nil
}
