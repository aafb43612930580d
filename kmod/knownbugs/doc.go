// Package knownbugs lists the known bugs of the QUIC module (lxin/quic) and
// the module builds each was seen on, and names a module build the ways the
// list does (its code hash, kmod.CodeHash; the lxin/quic commit of the tree
// it was built in; the loaded module's GNU build ID).
//
// Each bug has a reproducer test (kquic/ and elsewhere, through
// internal/testenv.ModuleBug) that is an expected failure on a listed build
// and a failure on any other; and, where `kqbench interop` shows it, the
// signs of it in a failed case (Sign), so the command reports such a
// failure as that bug on a build that has it.
package knownbugs
