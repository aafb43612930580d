package interop

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"kquic.dev/internal/jsonfile"
)

// WriteMatrix writes results in the shape of interop.seemann.io: rows
// servers, columns clients, a case's letters in the cell of each status,
// then every failure with its reason and evidence. A failure that is a
// known module bug on the build it ran on has a table of its own
// (known-bug), neither pass nor fail.
func WriteMatrix(w io.Writer, res []Result) {
	var servers, clients []string
	seen := map[string]bool{}
	for _, r := range res {
		if !seen["s"+r.Server] {
			seen["s"+r.Server] = true
			servers = append(servers, r.Server)
		}
		if !seen["c"+r.Client] {
			seen["c"+r.Client] = true
			clients = append(clients, r.Client)
		}
	}
	abbrev := map[string]string{}
	for _, c := range Cases {
		abbrev[c.Name] = c.Abbrev
	}
	for _, status := range []string{Pass, KnownBug, Fail, Unsupported} {
		cells := map[string][]string{}
		n := 0
		for _, r := range res {
			if r.Status == status {
				k := r.Server + "\x00" + r.Client
				cells[k] = append(cells[k], abbrev[r.Case])
				n++
			}
		}
		if n == 0 {
			continue
		}
		fmt.Fprintf(w, "%s (%d):\n", status, n)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  server \\ client\t%s\n", strings.Join(clients, "\t"))
		for _, s := range servers {
			row := []string{"  " + s}
			for _, c := range clients {
				row = append(row, strings.Join(cells[s+"\x00"+c], " "))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	for _, r := range res {
		if r.Status != Fail && r.Status != KnownBug {
			continue
		}
		fmt.Fprintf(w, "%s, client %s, server %s: %s: %s\n", r.Case, r.Client, r.Server, r.Status, r.Reason)
		if r.KnownBug != "" {
			id, _, _ := strings.Cut(r.KnownBug, ":")
			if r.Status == KnownBug {
				fmt.Fprintf(w, "    known module bug %s on module %s\n", id, r.Module)
			} else {
				fmt.Fprintf(w, "    has the signs of known module bug %s, which module %s is not known to have\n", id, r.Module)
			}
		} else if r.Module != "" {
			fmt.Fprintf(w, "    module %s\n", r.Module)
		}
		for _, l := range r.KernelLog {
			fmt.Fprintf(w, "    kernel: %s\n", l)
		}
		if r.Evidence != "" {
			files := "trace.pcapng, keys.log, server.log, client.log"
			if r.Module != "" {
				files += ", kernel.log"
			}
			fmt.Fprintf(w, "    evidence: %s (%s)\n", r.Evidence, files)
		}
	}
	var legend []string
	for _, c := range Cases {
		legend = append(legend, c.Abbrev+"="+c.Name)
	}
	fmt.Fprintf(w, "\n%s\n", strings.Join(legend, " "))
}

// Schema names the results file's format.
const Schema = "kqbench.interop/v1"

// Document is a results file.
type Document struct {
	Schema  string    `json:"schema"`
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`
	// Module identifies the kernel QUIC module the kquic rows ran on.
	Module  string   `json:"module,omitempty"`
	Results []Result `json:"results"`
}

// Save writes the document as indented JSON.
func (d *Document) Save(path string) error {
	if err := jsonfile.Save(path, d); err != nil {
		return fmt.Errorf("interop: %w", err)
	}
	return nil
}

// LoadDocument reads a results file.
func LoadDocument(path string) (*Document, error) {
	var d Document
	if err := jsonfile.Load(path, &d, Schema); err != nil {
		return nil, fmt.Errorf("interop: %w", err)
	}
	return &d, nil
}
