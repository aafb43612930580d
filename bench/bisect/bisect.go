//go:build linux

package bisect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"kquic.dev/bench/ab"
	"kquic.dev/bench/results"
	"kquic.dev/kmod/modbuild"
)

// Options configures Run.
type Options struct {
	// Src is the module's source in a git checkout: the module's
	// directory, or a tree's top that modbuild knows how to build (an
	// lxin/quic checkout).
	Src string
	// Good and Bad are the range's ends: Good's figure is the reference,
	// Bad is worse. Bad must descend from Good.
	Good, Bad string
	// Build configures the builds (the kernel, the cache, make
	// variables); Src and Ref are set for each commit.
	Build modbuild.Options
	// Side makes one side of an A/B that loads module: a guest kept up
	// for its rounds until the side's Close. name is "good" or a commit.
	Side func(name, module string) ab.Side
	// Judge says what worse is: the metric, the threshold, the level.
	Judge ab.JudgeOptions
	// Rounds is the rounds per side of a step's first A/B (default 4);
	// an undecided step takes Rounds more at a time until MaxRounds
	// (default 3×Rounds), and is then skipped.
	Rounds, MaxRounds int
	// Compare configures the A/B's comparison table (its Force).
	Compare results.CompareOptions
	// Dir receives each step's rounds, bisect.json and bisect.log.
	Dir string
	// Log receives progress (default: discarded).
	Log io.Writer

	// build, if set, replaces modbuild for the tests of the search.
	build func(ctx context.Context, commit string) (module, code string, err error)
}

// Outcome is what a step found a commit to be.
type Outcome string

// The outcomes of a step, in git bisect's words.
const (
	Good Outcome = "good"
	Bad  Outcome = "bad"
	Skip Outcome = "skip"
)

// Step is one commit judged.
type Step struct {
	// Commit is its full hash, Subject its first line.
	Commit  string `json:"commit"`
	Subject string `json:"subject"`
	// Outcome is good, bad or skip; Why says how it was decided.
	Outcome Outcome `json:"outcome"`
	Why     string  `json:"why"`
	// Module is the module file built, Code its code hash.
	Module string `json:"module,omitempty"`
	Code   string `json:"code,omitempty"`
	// Judgement is the A/B's verdict against the good end, with each
	// cell's figures and p values (nil where no A/B ran).
	Judgement *ab.Judgement `json:"judgement,omitempty"`
	// Rounds is the rounds per side measured; Dir holds them.
	Rounds int    `json:"rounds,omitempty"`
	Dir    string `json:"dir,omitempty"`
	// Took is the step's time, build included.
	Took time.Duration `json:"took"`
}

// Result is a finished bisection.
type Result struct {
	// Good and Bad are the ends' full hashes; Commits the range's
	// first-parent commits after Good, oldest first, Bad last.
	Good    string   `json:"good"`
	Bad     string   `json:"bad"`
	Commits []string `json:"commits"`
	// Reference is the good end's step (its build); BadEnd the bad end's
	// A/B against it.
	Reference Step `json:"reference"`
	BadEnd    Step `json:"bad_end"`
	// Steps are the commits judged between the ends, in order.
	Steps []Step `json:"steps"`
	// FirstBad is the first bad commit, where one was found.
	FirstBad string `json:"first_bad,omitempty"`
	// Candidates are the commits the first bad one is among where
	// skipped commits leave more than one (FirstBad is then empty).
	Candidates []string `json:"candidates,omitempty"`
	// NothingMoved says the bad end is not worse than the good end
	// beyond the threshold, significantly: there is no commit to find.
	NothingMoved bool `json:"nothing_moved,omitempty"`
	// BadEndUndecided says the bad end could be judged neither worse nor
	// the same (undecided after MaxRounds, or not built or measured):
	// there is nothing to bisect.
	BadEndUndecided bool `json:"bad_end_undecided,omitempty"`
	// Log is the bisection in git bisect log's form, the evidence in
	// its comments.
	Log string `json:"log"`
}

// repo is the git checkout of the source.
type repo struct {
	top string
}

func (r *repo) git(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", r.top}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

func (r *repo) subject(ctx context.Context, c string) string {
	s, _ := r.git(ctx, "log", "-1", "--format=%s", c)
	return s
}

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// bisector is one run's state.
type bisector struct {
	o Options
	r *repo
	// good is the good end's side, kept up across steps (a round that
	// fails takes its guest down; the side boots another for the next).
	good  ab.Side
	known map[string]Outcome // module code hash -> outcome
	log   strings.Builder
}

// Run bisects o.Good..o.Bad. It returns the Result (also saved as
// Dir/bisect.json and Dir/bisect.log) and an error where it could not
// finish: the Result then holds the steps made.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Rounds <= 0 {
		o.Rounds = 4
	}
	if o.MaxRounds < o.Rounds {
		o.MaxRounds = 3 * o.Rounds
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Side == nil {
		return nil, errors.New("bisect: no Side")
	}
	if o.Good == "" || o.Bad == "" {
		return nil, errors.New("bisect: give the range's good and bad ends")
	}
	if o.Dir == "" {
		return nil, errors.New("bisect: no directory for the results")
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("bisect: %w", err)
	}
	src, err := filepath.Abs(o.Src)
	if err != nil {
		return nil, err
	}
	o.Src = src
	top, err := gitTop(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("bisect: %w", err)
	}
	b := &bisector{o: o, r: &repo{top: top}, known: map[string]Outcome{}}
	defer b.closeGood()
	res := &Result{}
	err = b.run(ctx, res)
	res.Log = b.log.String()
	if serr := b.save(res); serr != nil && err == nil {
		err = serr
	}
	return res, err
}

// gitTop is the top of the checkout dir (or the nearest existing directory
// above it) lies in.
func gitTop(ctx context.Context, dir string) (string, error) {
	d := dir
	for {
		if _, err := os.Stat(d); err == nil {
			break
		}
		d = filepath.Dir(d)
	}
	out, err := exec.CommandContext(ctx, "git", "-C", d, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("%s is not in a git checkout", dir)
	}
	return strings.TrimSpace(string(out)), nil
}

func (b *bisector) logf(format string, args ...any) {
	fmt.Fprintf(&b.log, format, args...)
}

func (b *bisector) progress(format string, args ...any) {
	fmt.Fprintf(b.o.Log, "bisect: "+format+"\n", args...)
}

func (b *bisector) closeGood() {
	if b.good.Close != nil {
		if err := b.good.Close(); err != nil {
			b.progress("the good end's guest at the end: %v", err)
		}
	}
}

func (b *bisector) run(ctx context.Context, res *Result) error {
	o := b.o
	if err := b.resolve(ctx, res); err != nil {
		return err
	}
	j := o.Judge
	dir := "below"
	if j.Metric.LowerBetter {
		dir = "above"
	}
	what := j.Metric.Name
	if j.Metric.Improvement {
		what += " turned round (looking for the commit that improved it)"
	}
	b.logf("# kqbench bisect of %s, %s..%s (%d commits): %s, bad meaning more than %.3g%% %s the good end's, at alpha %.3g; %d rounds a side, up to %d\n",
		o.Src, short(res.Good), short(res.Bad), len(res.Commits), what, j.Threshold*100, dir, alphaOf(j), o.Rounds, o.MaxRounds)
	b.logf("git bisect start %s %s\n", res.Bad, res.Good)

	// The good end: its module is side A of every step.
	b.progress("the good end %s: building", short(res.Good))
	start := time.Now()
	ref := Step{Commit: res.Good, Subject: b.r.subject(ctx, res.Good), Outcome: Good, Why: "the good end: the reference"}
	var err error
	if ref.Module, ref.Code, err = b.build(ctx, res.Good); err != nil {
		return fmt.Errorf("bisect: the good end %s: %w", short(res.Good), err)
	}
	ref.Took = time.Since(start)
	res.Reference = ref
	b.known[ref.Code] = Good
	b.good = o.Side("good", ref.Module)
	b.logf("# good end: [%s] %s (module code %s)\n", res.Good, ref.Subject, ref.Code)

	// The bad end must be worse, else there is nothing to find.
	bad := b.step(ctx, res.Bad, "bad-end")
	res.BadEnd = bad
	b.logf("# bad end: [%s] %s: %s\n", res.Bad, bad.Subject, bad.Why)
	switch bad.Outcome {
	case Good:
		res.NothingMoved = true
		b.logf("# nothing moved beyond the threshold: the bad end is not worse than the good end\n")
		b.progress("nothing moved: the bad end %s is not worse than the good end (%s)", short(res.Bad), bad.Why)
		return nil
	case Skip:
		res.BadEndUndecided = true
		b.logf("# nothing to bisect: the bad end could not be judged worse than the good end\n")
		b.progress("nothing to bisect: the bad end %s: %s", short(res.Bad), bad.Why)
		return nil
	}
	b.known[bad.Code] = Bad
	b.logf("git bisect bad %s\n", res.Bad)

	return b.search(ctx, res)
}

// resolve sets the two ends' commits and the first-parent commits between
// them, checking that the good end is an ancestor of the bad one.
func (b *bisector) resolve(ctx context.Context, res *Result) error {
	o := b.o
	var err error
	if res.Good, err = b.r.git(ctx, "rev-parse", "--verify", o.Good+"^{commit}"); err != nil {
		return fmt.Errorf("bisect: the good end %s: %w", o.Good, err)
	}
	if res.Bad, err = b.r.git(ctx, "rev-parse", "--verify", o.Bad+"^{commit}"); err != nil {
		return fmt.Errorf("bisect: the bad end %s: %w", o.Bad, err)
	}
	if _, err := b.r.git(ctx, "merge-base", "--is-ancestor", res.Good, res.Bad); err != nil {
		return fmt.Errorf("bisect: the good end %s is not an ancestor of the bad end %s", short(res.Good), short(res.Bad))
	}
	list, err := b.r.git(ctx, "rev-list", "--first-parent", "--reverse", res.Good+".."+res.Bad)
	if err != nil {
		return fmt.Errorf("bisect: %w", err)
	}
	res.Commits = strings.Fields(list)
	if len(res.Commits) == 0 {
		return fmt.Errorf("bisect: no commit between %s and %s", short(res.Good), short(res.Bad))
	}
	return nil
}

// search is the binary search over the commits between the ends, once the
// bad end was judged bad: the first bad commit, or the candidates the
// skipped steps leave.
func (b *bisector) search(ctx context.Context, res *Result) error {
	// Binary search over the commits between: lo is the last known good
	// (-1: the good end), hi the first known bad.
	lo, hi := -1, len(res.Commits)-1
	skipped := map[int]bool{}
	for n := 1; ; n++ {
		mid, ok := pick(lo, hi, skipped)
		if !ok {
			break
		}
		c := res.Commits[mid]
		b.progress("step %d: %s, %d commits left between the last good and the first bad", n, short(c), hi-lo-1)
		s := b.step(ctx, c, fmt.Sprintf("step-%d-%s", n, short(c)))
		res.Steps = append(res.Steps, s)
		b.logf("# step %d: [%s] %s: %s\n", n, c, s.Subject, s.Why)
		b.logf("git bisect %s %s\n", s.Outcome, c)
		b.progress("step %d: %s is %s: %s", n, short(c), s.Outcome, s.Why)
		switch s.Outcome {
		case Good:
			lo = mid
		case Bad:
			hi = mid
		default:
			skipped[mid] = true
		}
		if ctx.Err() != nil {
			b.save(res)
			return ctx.Err()
		}
	}
	if hi-lo == 1 {
		res.FirstBad = res.Commits[hi]
		b.logf("# first bad commit: [%s] %s\n", res.FirstBad, b.r.subject(ctx, res.FirstBad))
		return nil
	}
	res.Candidates = res.Commits[lo+1 : hi+1]
	b.logf("# the first bad commit is one of (the others skipped):\n")
	for _, c := range res.Candidates {
		b.logf("#   [%s] %s\n", c, b.r.subject(ctx, c))
	}
	return nil
}

func alphaOf(j ab.JudgeOptions) float64 {
	if j.Alpha == 0 {
		return 0.05
	}
	return j.Alpha
}

// pick is the next commit to judge: of those strictly between lo and hi
// not skipped, the one nearest the middle (git bisect's choice where
// commits are skipped).
func pick(lo, hi int, skipped map[int]bool) (int, bool) {
	mid := (lo + hi) / 2
	for d := 0; d <= hi-lo; d++ {
		for _, i := range []int{mid - d, mid + d} {
			if i > lo && i < hi && !skipped[i] {
				return i, true
			}
		}
	}
	return 0, false
}

// build builds the module of commit c (or finds it in the cache).
func (b *bisector) build(ctx context.Context, c string) (module, code string, err error) {
	if b.o.build != nil {
		return b.o.build(ctx, c)
	}
	bo := b.o.Build
	bo.Src, bo.Ref = b.o.Src, c
	if bo.Log == nil {
		bo.Log = b.o.Log
	}
	r, err := modbuild.Build(ctx, bo)
	if err != nil {
		return "", "", err
	}
	if len(r.Modules) == 0 {
		return "", "", errors.New("the build has no module")
	}
	name, _ := filepath.Rel(r.Dir, r.Modules[0])
	return r.Modules[0], r.Codes[name], nil
}

// step judges commit c against the good end.
func (b *bisector) step(ctx context.Context, c, name string) Step {
	start := time.Now()
	s := Step{Commit: c, Subject: b.r.subject(ctx, c)}
	defer func() { s.Took = time.Since(start) }()
	var err error
	s.Module, s.Code, err = b.build(ctx, c)
	if err != nil {
		s.Outcome, s.Why = Skip, "the build failed: "+firstLine(err.Error())
		return s
	}
	if out, ok := b.known[s.Code]; ok {
		s.Outcome, s.Why = out, fmt.Sprintf("module code %s, as a %s commit's: not measured", s.Code, out)
		return s
	}
	s.Dir = filepath.Join(b.o.Dir, name)
	var docA, docB []*results.Document
	for s.Rounds < b.o.MaxRounds {
		n := min(b.o.Rounds, b.o.MaxRounds-s.Rounds)
		batch := filepath.Join(s.Dir, fmt.Sprintf("rounds-%d", s.Rounds+1))
		if err := os.MkdirAll(batch, 0o755); err != nil {
			s.Outcome, s.Why = Skip, err.Error()
			return s
		}
		good := b.good
		good.Close = nil // kept up for the next step
		b.progress("%s: %d rounds a side against the good end -> %s", short(c), n, batch)
		r, err := ab.Run(ctx, good, b.o.Side(short(c), s.Module), ab.Options{Rounds: n, Dir: batch, Compare: b.o.Compare, Log: b.o.Log})
		if err != nil {
			if r == nil || r.A == nil || ctx.Err() != nil {
				s.Outcome, s.Why = Skip, "the A/B failed: "+firstLine(err.Error())
				return s
			}
			b.progress("%s: %v (the rounds that finished count)", short(c), err)
		}
		docA, docB = append(docA, r.A), append(docB, r.B)
		s.Rounds += n
		j, err := ab.Judge(ab.Merge(docA), ab.Merge(docB), b.o.Judge)
		if err != nil {
			s.Outcome, s.Why = Skip, "no verdict: "+err.Error()
			return s
		}
		s.Judgement = j
		b.progress("%s after %d rounds: %s", short(c), s.Rounds, strings.TrimSpace(j.String()))
		switch j.Verdict {
		case ab.Same:
			s.Outcome = Good
		case ab.Worse:
			s.Outcome = Bad
		default:
			if s.Rounds < b.o.MaxRounds {
				continue
			}
			s.Outcome = Skip
		}
		s.Why = evidence(j, s.Rounds)
		if s.Outcome == Skip {
			s.Why = "undecided after the most rounds: " + s.Why
		}
		return s
	}
	s.Outcome, s.Why = Skip, "no rounds"
	return s
}

// evidence is a judgement in one line: each cell's medians, change and p
// values.
func evidence(j *ab.Judgement, rounds int) string {
	var parts []string
	for _, c := range j.Cells {
		parts = append(parts, fmt.Sprintf("%s %s: good end %.4g, this %.4g %s (%+.1f%%, limit %.4g), n=%d/%d, p(worse)=%.3g, p(same)=%.3g; good end %s, this %s",
			c.Key, c.Verdict, c.MedianA, c.MedianB, j.Metric.Unit, c.ChangePct, c.Limit, len(c.A), len(c.B), c.PWorse, c.PSame, ab.Figures(c.A), ab.Figures(c.B)))
	}
	return fmt.Sprintf("%s after %d rounds a side; %s", j.Verdict, rounds, strings.Join(parts, "; "))
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// save writes the result's JSON and log into Dir.
func (b *bisector) save(res *Result) error {
	res.Log = b.log.String()
	j, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(b.o.Dir, "bisect.json"), j, 0o644); err != nil {
		return fmt.Errorf("bisect: %w", err)
	}
	return os.WriteFile(filepath.Join(b.o.Dir, "bisect.log"), []byte(res.Log), 0o644)
}
