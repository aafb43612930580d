package ab

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"kquic.dev/bench/results"
)

// A Metric is the figure of a cell's samples that a verdict judges.
type Metric struct {
	// Name is as the user gives it ("goodput", "rps", "counter:NAME").
	Name string `json:"name"`
	// Unit labels the figures ("Mbit/s", "req/s", "per MB").
	Unit string `json:"unit"`
	// LowerBetter says a rise is the worse direction (packets per MB,
	// latency); else a fall is.
	LowerBetter bool `json:"lower_better,omitempty"`
	// Counter names the --explain counter the metric needs, if any.
	Counter string `json:"counter,omitempty"`
	// Improvement says the metric is turned round to look for a change
	// for the better (Reversed): "worse" is then better by more than the
	// threshold, as git bisect's "new" where "old" is the slower figure.
	Improvement bool `json:"improvement,omitempty"`
	// Value is a sample's figure; false where the sample has none.
	Value func(results.Sample) (float64, bool) `json:"-"`
}

// MetricNames lists the metrics ParseMetric knows, for help texts: the
// goodput, the modes' named figures (results.NamedFigure), and the
// counters.
func MetricNames() string {
	names := []string{"goodput (Mbit/s; of a mode whose figure it is)"}
	for _, f := range results.NamedFigures() {
		names = append(names, fmt.Sprintf("%s (%s)", f.Name, f.About))
	}
	return strings.Join(append(names, "packets (the sender's packets per MB, with --explain's counters)", "counter:NAME (any --explain counter per MB, lower better)"), ", ")
}

// ParseMetric returns the metric a name gives (MetricNames).
func ParseMetric(name string) (Metric, error) {
	for _, f := range results.NamedFigures() {
		if f.Name == name {
			return Metric{Name: name, Unit: f.Unit, LowerBetter: f.LowerBetter, Value: func(s results.Sample) (float64, bool) {
				if s.Payload == nil || s.Payload.PayloadKey() != f.Key {
					return 0, false
				}
				return f.Value(s.Payload), true
			}}, nil
		}
	}
	switch name {
	case "goodput":
		return Metric{Name: name, Unit: "Mbit/s", Value: func(s results.Sample) (float64, bool) {
			if s.Seconds <= 0 || !s.GoodputIsFigure() {
				return 0, false
			}
			return s.Bps / 1e6, true
		}}, nil
	case "packets":
		m, _ := ParseMetric("counter:client.tx_packets")
		m.Name = name
		return m, nil
	}
	if c, ok := strings.CutPrefix(name, "counter:"); ok && c != "" {
		return Metric{Name: name, Unit: "per MB", LowerBetter: true, Counter: c, Value: func(s results.Sample) (float64, bool) {
			v, ok := s.Counters[c]
			if !ok || s.Bytes <= 0 {
				return 0, false
			}
			return v / (float64(s.Bytes) / 1e6), true
		}}, nil
	}
	return Metric{}, fmt.Errorf("unknown metric %q: want one of %s", name, MetricNames())
}

// Reversed is the metric turned round, to find an improvement with the
// machinery that finds a regression: better by more than the threshold is
// judged "worse".
func (m Metric) Reversed() Metric {
	m.LowerBetter = !m.LowerBetter
	m.Improvement = !m.Improvement
	return m
}

// ParseThreshold reads a threshold in percent ("5%", "5", "2.5%") as a
// fraction (0.05).
func ParseThreshold(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil || v <= 0 || v >= 100 {
		return 0, fmt.Errorf("threshold %q: want a percentage above 0 and below 100 (5%%)", s)
	}
	return v / 100, nil
}

// Verdict is the outcome of judging side B against side A.
type Verdict int

// The verdicts, in the exit codes of kqbench ab --exit-code and git bisect
// run: 0 good, 1 bad, 125 skip.
const (
	// Same: B is not worse than A by the threshold, significantly.
	Same Verdict = iota
	// Worse: B is worse than A by more than the threshold, significantly.
	Worse
	// Undecided: the samples can tell neither.
	Undecided
)

// MarshalText writes the verdict as its word.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText reads the verdict's word.
func (v *Verdict) UnmarshalText(b []byte) error {
	for _, w := range []Verdict{Same, Worse, Undecided} {
		if string(b) == w.String() {
			*v = w
			return nil
		}
	}
	return fmt.Errorf("verdict %q: want same, worse or undecided", b)
}

func (v Verdict) String() string {
	switch v {
	case Same:
		return "same"
	case Worse:
		return "worse"
	}
	return "undecided"
}

// ExitCode is the verdict as kqbench ab --exit-code and git bisect run
// read it: 0 same (good), 1 worse (bad), 125 undecided (skip).
func (v Verdict) ExitCode() int {
	switch v {
	case Same:
		return 0
	case Worse:
		return 1
	}
	return 125
}

// JudgeOptions are the terms of a verdict.
type JudgeOptions struct {
	// Metric is the figure judged.
	Metric Metric
	// Threshold is how much worse B may be before it is worse, as a
	// fraction of A (0.05).
	Threshold float64
	// Alpha is the significance level of the two one-sided tests
	// (default 0.05).
	Alpha float64
	// Cells, if set, are the keys of the cells judged; else every cell
	// both sides measured.
	Cells []string
}

// CellJudgement is one cell's verdict and its evidence.
type CellJudgement struct {
	Key     string  `json:"key"`
	Verdict Verdict `json:"verdict"`
	// A and B are each side's figures, in sample order.
	A []float64 `json:"a"`
	B []float64 `json:"b"`
	// MedianA and MedianB are their medians, ChangePct B's change in
	// percent of A's.
	MedianA   float64 `json:"median_a"`
	MedianB   float64 `json:"median_b"`
	ChangePct float64 `json:"change_pct"`
	// Limit is the threshold's share of A's median: B's median worse than
	// it is beyond the threshold.
	Limit float64 `json:"limit"`
	// PWorse is the p value of the one-sided Mann-Whitney U test that B
	// is worse than A shifted by the threshold (A×(1-t), or A×(1+t) where
	// lower is better); PSame that B is better than that. PBoth is the
	// two-sided test of B against A unshifted, as kqbench compare gives
	// it.
	PWorse float64 `json:"p_worse"`
	PSame  float64 `json:"p_same"`
	PBoth  float64 `json:"p_differ"`
}

// Judgement is the verdict on B against A over the cells judged.
type Judgement struct {
	Verdict Verdict `json:"verdict"`
	Metric  Metric  `json:"metric"`
	// Threshold and Alpha are as judged with.
	Threshold float64         `json:"threshold"`
	Alpha     float64         `json:"alpha"`
	Cells     []CellJudgement `json:"cells"`
}

// Judge decides whether B is worse than A on a metric, beyond a threshold,
// cell by cell, with two one-sided Mann-Whitney U tests of B against A's
// samples shifted by the threshold (A×(1-t) for a metric where higher is
// better): significantly below, the cell is worse; significantly above,
// the same; neither, undecided. B is worse where any cell is worse, the
// same where every cell is the same, else undecided. A cell that either
// side lacks, or whose samples lack the metric, is an error.
func Judge(a, b *results.Document, o JudgeOptions) (*Judgement, error) {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.Threshold <= 0 || o.Threshold >= 1 {
		return nil, fmt.Errorf("judge: threshold %v: want a fraction between 0 and 1", o.Threshold)
	}
	if o.Metric.Value == nil {
		return nil, fmt.Errorf("judge: no metric")
	}
	keys := o.Cells
	if len(keys) == 0 {
		for _, c := range a.Cells {
			if c.Status == results.StatusOK {
				if cb, ok := b.LookupKey(c.Key); ok && cb.Status == results.StatusOK {
					keys = append(keys, c.Key)
				}
			}
		}
		if len(keys) == 0 {
			return nil, fmt.Errorf("judge: the two sides have no measured cell in common")
		}
	}
	j := &Judgement{Verdict: Same, Metric: o.Metric, Threshold: o.Threshold, Alpha: o.Alpha}
	worse, undecided := false, false
	for _, k := range keys {
		ca, oka := a.LookupKey(k)
		cb, okb := b.LookupKey(k)
		switch {
		case !oka || !okb:
			return nil, fmt.Errorf("judge: cell %s was not measured on both sides", k)
		case ca.Status != results.StatusOK || cb.Status != results.StatusOK:
			return nil, fmt.Errorf("judge: cell %s: A %s, B %s (%s%s)", k, ca.Status, cb.Status, ca.Error, cb.Error)
		}
		cj := CellJudgement{Key: k, A: values(ca, o.Metric), B: values(cb, o.Metric)}
		if len(cj.A) == 0 || len(cj.B) == 0 {
			hint := ""
			if o.Metric.Counter != "" {
				hint = " (counters need --explain)"
			}
			return nil, fmt.Errorf("judge: cell %s: %d samples of A and %d of B have %s%s", k, len(cj.A), len(cj.B), o.Metric.Name, hint)
		}
		cj.MedianA, cj.MedianB = median(cj.A), median(cj.B)
		if cj.MedianA != 0 {
			cj.ChangePct = (cj.MedianB - cj.MedianA) / math.Abs(cj.MedianA) * 100
		}
		f := 1 - o.Threshold
		if o.Metric.LowerBetter {
			f = 1 + o.Threshold
		}
		cj.Limit = cj.MedianA * f
		shifted := make([]float64, len(cj.A))
		for i, v := range cj.A {
			shifted[i] = v * f
		}
		above, below := MannWhitneyGreater(cj.B, shifted), MannWhitneyGreater(shifted, cj.B)
		cj.PWorse, cj.PSame = below, above
		if o.Metric.LowerBetter {
			cj.PWorse, cj.PSame = above, below
		}
		cj.PBoth = math.Min(1, 2*math.Min(MannWhitneyGreater(cj.B, cj.A), MannWhitneyGreater(cj.A, cj.B)))
		switch {
		case cj.PWorse < o.Alpha:
			cj.Verdict = Worse
			worse = true
		case cj.PSame < o.Alpha:
			cj.Verdict = Same
		default:
			cj.Verdict = Undecided
			undecided = true
		}
		j.Cells = append(j.Cells, cj)
	}
	switch {
	case worse:
		j.Verdict = Worse
	case undecided:
		j.Verdict = Undecided
	}
	return j, nil
}

func values(c *results.CellResult, m Metric) []float64 {
	var v []float64
	for _, s := range c.Samples {
		if x, ok := m.Value(s); ok && !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	return v
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// String is the judgement in a few lines: the verdict, then each cell's
// medians, change, limit and p values.
func (j *Judgement) String() string {
	var b strings.Builder
	dir := "below"
	if j.Metric.LowerBetter {
		dir = "above"
	}
	what := j.Metric.Name
	if j.Metric.Improvement {
		what += " turned round (looking for an improvement)"
	}
	fmt.Fprintf(&b, "%s: B against A on %s, worse meaning more than %.3g%% %s A, at alpha %.3g\n", j.Verdict, what, j.Threshold*100, dir, j.Alpha)
	for _, c := range j.Cells {
		fmt.Fprintf(&b, "  %s: %s: A %.4g, B %.4g %s (%+.1f%%, limit %.4g; n=%d/%d; p(worse)=%.3g, p(same)=%.3g, p(differ)=%.3g)\n",
			c.Key, c.Verdict, c.MedianA, c.MedianB, j.Metric.Unit, c.ChangePct, c.Limit, len(c.A), len(c.B), c.PWorse, c.PSame, c.PBoth)
		fmt.Fprintf(&b, "    samples A %s\n    samples B %s\n", Figures(c.A), Figures(c.B))
	}
	return b.String()
}

// MannWhitneyGreater is the p value of the one-sided Mann-Whitney U test
// that x is stochastically greater than y: exact where there are no ties
// and the samples are small (up to 2500 pairs), else the normal
// approximation with the tie correction and a continuity correction. It is
// 1 where either sample is empty.
func MannWhitneyGreater(x, y []float64) float64 {
	m, n := len(x), len(y)
	if m == 0 || n == 0 {
		return 1
	}
	// U counts the pairs with x above y, ties a half.
	u := 0.0
	ties := false
	for _, a := range x {
		for _, b := range y {
			switch {
			case a > b:
				u++
			case a == b:
				u += 0.5
				ties = true
			}
		}
	}
	if !ties && m*n <= 2500 {
		dist := uDistribution(m, n)
		total, tail := 0.0, 0.0
		for k, c := range dist {
			total += c
			if float64(k) >= u {
				tail += c
			}
		}
		return tail / total
	}
	// The normal approximation, with the variance's tie correction.
	all := append(append([]float64(nil), x...), y...)
	sort.Float64s(all)
	tieSum := 0.0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j] == all[i] {
			j++
		}
		t := float64(j - i)
		tieSum += t*t*t - t
		i = j
	}
	N := float64(m + n)
	mean := float64(m*n) / 2
	variance := float64(m*n) / 12 * (N + 1 - tieSum/(N*(N-1)))
	if variance <= 0 {
		return 1
	}
	z := (u - mean - 0.5) / math.Sqrt(variance)
	return 0.5 * math.Erfc(z/math.Sqrt2)
}

// uDistribution counts, for each U from 0 to m*n, the orderings of m and n
// distinct values that give it.
func uDistribution(m, n int) []float64 {
	// f[i][j] is the distribution for i and j values; built up row by
	// row: N(u; i, j) = N(u-j; i-1, j) + N(u; i, j-1).
	prev := make([][]float64, n+1) // i-1
	for j := range prev {
		prev[j] = []float64{1} // i = 0: U is 0
	}
	for i := 1; i <= m; i++ {
		cur := make([][]float64, n+1)
		cur[0] = []float64{1}
		for j := 1; j <= n; j++ {
			d := make([]float64, i*j+1)
			for u, c := range cur[j-1] {
				d[u] += c
			}
			for u, c := range prev[j] {
				d[u+j] += c
			}
			cur[j] = d
		}
		prev = cur
	}
	return prev[n]
}

// Figures lists figures to four significant digits, as the verdicts show
// the samples.
func Figures(xs []float64) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, strconv.FormatFloat(x, 'g', 4, 64))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
