//go:build linux

package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"kquic.dev/bench/matrix"
)

// modeFlags are matrix's --mode and the flags of the modes and drivers,
// as their packages declare them (matrix.ModeSpec.Flags,
// matrix.DriverSpec.Flags).
type modeFlags struct {
	mode   string
	values map[string]*modeFlag
	cmd    *cobra.Command
}

// modeFlag is one flag of modes or drivers: its value, and whose it is (a
// mode's name, or "--driver NAME").
type modeFlag struct {
	single *string
	list   *[]string
	number *int
	owners []string
}

func (m *modeFlags) register(cmd *cobra.Command) {
	m.cmd, m.values = cmd, map[string]*modeFlag{}
	f := cmd.Flags()
	var about []string
	for _, name := range matrix.Modes() {
		ms, _ := matrix.ModeSpecOf(name)
		if ms.About == "" {
			about = append(about, string(name))
		} else {
			about = append(about, fmt.Sprintf("%s (%s)", name, ms.About))
		}
		for _, fl := range ms.Flags {
			m.add(f, fl, string(name), string(name)+": ")
		}
	}
	for _, d := range matrix.Drivers()[1:] {
		ds, _ := matrix.DriverSpecOf(d)
		for _, fl := range ds.Flags {
			m.add(f, fl, "--driver "+string(d), "")
		}
	}
	f.StringVar(&m.mode, "mode", string(matrix.DefaultMode()), "what a cell measures: "+strings.Join(about, ", "))
}

// add registers fl of owner, or adds owner to the flag of that name.
func (m *modeFlags) add(f *pflag.FlagSet, fl matrix.Flag, owner, prefix string) {
	if mf, ok := m.values[fl.Name]; ok {
		p := f.Lookup(fl.Name)
		if (mf.list != nil) != fl.List || (mf.number != nil) != fl.Int || p.DefValue != defValue(fl) {
			panic(fmt.Sprintf("kqbench: flag --%s of %s differs from its other owners' (%s)", fl.Name, owner, strings.Join(mf.owners, ", ")))
		}
		p.Usage += "; " + prefix + fl.Usage
		mf.owners = append(mf.owners, owner)
		return
	}
	mf := &modeFlag{owners: []string{owner}}
	switch {
	case fl.List:
		mf.list = f.StringSlice(fl.Name, matrix.SplitList([]string{fl.Default}), prefix+fl.Usage)
	case fl.Int:
		n, err := strconv.Atoi(fl.Default)
		if err != nil {
			panic(fmt.Sprintf("kqbench: flag --%s of %s: default %q is not a number", fl.Name, owner, fl.Default))
		}
		mf.number = f.Int(fl.Name, n, prefix+fl.Usage)
	default:
		mf.single = f.String(fl.Name, fl.Default, prefix+fl.Usage)
	}
	m.values[fl.Name] = mf
}

// defValue is the default of fl as pflag prints it.
func defValue(fl matrix.Flag) string {
	if fl.List {
		return "[" + strings.Join(matrix.SplitList([]string{fl.Default}), ",") + "]"
	}
	return fl.Default
}

// apply sets the spec's mode and what its flags say (its Apply), refusing
// the flags of the other modes.
func (m *modeFlags) apply(cmd *cobra.Command, s *matrix.Spec) error {
	name := matrix.Mode(m.mode)
	ms, err := matrix.ModeSpecOf(name)
	if err != nil {
		return fmt.Errorf("matrix: --%w", err)
	}
	s.Mode = name
	if ms.Default {
		s.Mode = ""
	}
	for _, flag := range slices.Sorted(maps.Keys(m.values)) {
		mf := m.values[flag]
		if cmd.Flags().Changed(flag) && !slices.Contains(mf.owners, string(name)) && !strings.HasPrefix(mf.owners[0], "--driver ") {
			return fmt.Errorf("matrix: --%s is for --mode %s", flag, strings.Join(mf.owners, ", "))
		}
	}
	if ms.Apply != nil {
		if err := ms.Apply(s, flagValues{m}); err != nil {
			return fmt.Errorf("matrix: %w", err)
		}
	}
	return nil
}

// List is a list flag's items.
func (m *modeFlags) List(name string) []string {
	if mf := m.values[name]; mf != nil && mf.list != nil {
		return *mf.list
	}
	return nil
}

// flagValues are the command line as a mode's Apply reads it.
type flagValues struct{ m *modeFlags }

func (v flagValues) Changed(name string) bool { return v.m.cmd.Flags().Changed(name) }

func (v flagValues) Value(name string) string {
	switch mf := v.m.values[name]; {
	case mf == nil:
		return ""
	case mf.single != nil:
		return *mf.single
	case mf.number != nil:
		return strconv.Itoa(*mf.number)
	}
	return strings.Join(*v.m.values[name].list, ",")
}

func (v flagValues) List(name string) []string { return v.m.List(name) }

// noteCommon adds to the help of the common flags what each mode makes of
// them (matrix.ModeSpec.Notes).
func (m *modeFlags) noteCommon(cmd *cobra.Command) {
	notes := map[string][]string{}
	for _, name := range matrix.Modes() {
		ms, _ := matrix.ModeSpecOf(name)
		for flag, note := range ms.Notes {
			notes[flag] = append(notes[flag], fmt.Sprintf("--mode %s: %s", name, note))
		}
	}
	for flag, ns := range notes {
		if p := cmd.Flags().Lookup(flag); p != nil {
			p.Usage += " (" + strings.Join(ns, "; ") + ")"
		}
	}
}

// driverOptions are the run's options of its drivers, made of their flags
// (matrix.DriverSpec.Options).
func (m *modeFlags) driverOptions(drivers []matrix.Driver) (map[matrix.Driver]any, error) {
	opts := map[matrix.Driver]any{}
	for _, d := range drivers {
		if ds, ok := matrix.DriverSpecOf(d); ok && ds.Options != nil {
			o, err := ds.Options(flagValues{m})
			if err != nil {
				return nil, fmt.Errorf("--driver %s: %w", d, err)
			}
			opts[d] = o
		}
	}
	return opts, nil
}

// registeredHelp is the paragraphs of matrix --help on the modes, the
// drivers and the presets.
func registeredHelp() string {
	var b strings.Builder
	add := func(p string) {
		if p != "" {
			b.WriteString("\n\n" + p)
		}
	}
	for _, name := range matrix.Modes() {
		ms, _ := matrix.ModeSpecOf(name)
		add(ms.Help)
	}
	for _, d := range matrix.Drivers()[1:] {
		ds, _ := matrix.DriverSpecOf(d)
		add(ds.Help)
	}
	for _, n := range matrix.Presets() {
		p, _ := matrix.LookupPreset(n)
		add(p.Help)
	}
	return b.String()
}

// driverUsage is --driver's help: the drivers there are.
func driverUsage() string {
	u, side := "what moves the bytes: go (this process, through the Go bindings)", ""
	for _, d := range matrix.Drivers()[1:] {
		ds, _ := matrix.DriverSpecOf(d)
		u += fmt.Sprintf(", %s (%s; columns named kquic%s, ...)", d, ds.About, ds.Column)
		side += fmt.Sprintf(", or go,%s side by side", d)
	}
	return u + side
}

// readSizeUsage is --read-size's help.
func readSizeUsage() string {
	beside := ""
	for _, d := range matrix.Drivers()[1:] {
		if ds, _ := matrix.DriverSpecOf(d); ds.ReadMessage {
			beside += " beside --driver " + string(d)
		}
	}
	return "bytes a receiver asks for in each read: msg (the message size, as iperf3 -l and the module's README runs read), a size (64K), or auto: msg" + beside + ", else the message size or 64 KiB, whichever is larger"
}

// presetUsage is --preset's help: the presets there are.
func presetUsage() string {
	var ps []string
	for _, n := range matrix.Presets() {
		p, _ := matrix.LookupPreset(n)
		ps = append(ps, fmt.Sprintf("%s (%s)", n, p.About))
	}
	return "a named set of the flags above: " + strings.Join(ps, "; ")
}
