package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"kquic.dev/bench/flame"
)

func newFlameCmd() *cobra.Command {
	var (
		out  string
		diff bool
		o    flame.Options
	)
	cmd := &cobra.Command{
		Use:   "flame FOLDED... -o OUT.svg | flame --diff A.folded B.folded -o DIFF.svg",
		Short: "Draw folded stacks (kqbench matrix --profile) as a flamegraph, or two as a differential one",
		Long: `Draw folded stacks - the files kqbench matrix --profile writes, or any in
Brendan Gregg's folded format - as a flamegraph in one self-contained SVG.
Several files are merged first.

With --diff, draw B against A: the frames laid out by B's samples (A's with
--negate, so that what B no longer runs shows), A scaled to B's total, red
where B spends a larger share than A, blue where a smaller one.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("flame: give the SVG's path with -o")
			}
			read := func(paths []string) (flame.Folded, error) {
				all := flame.Folded{}
				for _, p := range paths {
					f, err := flame.ReadFoldedFile(p)
					if err != nil {
						return nil, fmt.Errorf("flame: %w", err)
					}
					all.Merge(f)
				}
				return all, nil
			}
			var b bytes.Buffer
			if diff {
				if len(args) != 2 {
					return errors.New("flame --diff: give two folded files, A then B")
				}
				a, err := read(args[:1])
				if err != nil {
					return err
				}
				bf, err := read(args[1:])
				if err != nil {
					return err
				}
				if err := flame.DiffSVG(&b, a, bf, o); err != nil {
					return fmt.Errorf("flame: %s against %s: %w", args[1], args[0], err)
				}
			} else {
				if o.Negate {
					return errors.New("flame: --negate is for --diff")
				}
				f, err := read(args)
				if err != nil {
					return err
				}
				if err := flame.SVG(&b, f, o); err != nil {
					return fmt.Errorf("flame: %w", err)
				}
			}
			if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
				return fmt.Errorf("flame: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "", "the SVG to write")
	f.BoolVar(&diff, "diff", false, "draw B against A (two files: A then B)")
	f.BoolVar(&o.Negate, "negate", false, "with --diff: lay the frames out by A's samples, so that what B dropped shows (blue)")
	f.StringVar(&o.Title, "title", "", "the graph's title")
	f.StringVar(&o.Highlight, "highlight", "quic_", "draw frames whose names start with this in magenta (\"\" for none)")
	f.IntVar(&o.Width, "width", 1200, "the image's width in pixels")
	return cmd
}
