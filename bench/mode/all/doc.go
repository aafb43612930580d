// Package all is every mode and driver of kqbench, for a blank import
// where they are needed: each mode's package registers its parts with the
// layers that use them (package bench/mode's doc lists them), and a
// program or test that reads, renders or measures results imports this
// package to have them all:
//
//	import _ "kquic.dev/bench/mode/all"
//
// A new mode is a new folder under bench/mode and one line here.
package all
