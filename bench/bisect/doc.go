// Package bisect finds the commit of a module's source tree that made a
// figure worse (kqbench bisect): over the first-parent commits between a
// good and a bad end, each step builds the module of a commit
// (kmod/modbuild, cached by source tree), measures it against the good
// end's module in ABBA rounds (bench/ab, each side in a guest of its own)
// and judges it with ab.Judge: worse beyond the threshold is bad, the same
// is good, undecided takes more rounds up to a limit and is then skipped,
// as git bisect skip does. A commit whose module has the code of one
// already judged (kmod.CodeHash: a commit that did not touch the module) is
// judged alike without a measurement. The bad end is measured first: when
// it is not worse than the good end, nothing moved and there is nothing to
// find.
//
// The answer is the first bad commit (or the commits that skips leave it
// among), every step's figures and p values, and a log in git bisect's
// form (git bisect replay reads it) with the evidence in its comments.
package bisect
