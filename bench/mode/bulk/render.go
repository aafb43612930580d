package bulk

import (
	"fmt"
	"io"
	"kquic.dev/bench/mode/bulk/conns"
	"strconv"
	"strings"
	"text/tabwriter"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

func init() {
	render.RegisterView(Name, render.View{Tables: writeTables, Explain: writeExplain, Columns: &render.Columns{Head: csvHead(), Row: csvRow,
		For: func(d *results.Document) bool { return len(d.Spec.Conns) > 0 }}})
}

// writeTables prints a bulk matrix: the goodput tables (render's) for a
// run without --conns, as it always did; with --conns, per direction,
// encryption, MTU, GSO and size, a scaling table (a row per transport, a
// column per connection count: the aggregate goodput, the fairness and
// the goodput per busy core) and the connections' table (each cell's
// connections' goodput and every CPU's time by kind).
func writeTables(w io.Writer, d *results.Document) error {
	s := d.Spec
	if len(s.Conns) == 0 {
		if err := render.WriteGoodputTables(w, d); err != nil {
			return err
		}
		writeSendNote(w, d)
		return nil
	}
	cc := s.CCAxis()[0]
	caveat := d.Env.Machine.Caveat()
	if d.Env.PeerIsThisMachine {
		fmt.Fprintln(w, render.SamePeerWarning)
	}
	if s.Affinity != nil {
		fmt.Fprintf(w, "Connections pinned as --affinity says (%s; each connection's CPUs below)\n", affinityWords(s.Affinity))
	} else {
		fmt.Fprintln(w, "Connections not pinned (--affinity none)")
	}
	for _, dir := range s.Directions {
		for _, crypto := range s.Crypto {
			for _, mtu := range s.MTUs {
				for _, gso := range s.GSO {
					for _, size := range s.Sizes {
						base := matrix.Cell{Size: size, MTU: mtu, GSO: gso, Crypto: crypto, Direction: dir, Streams: s.Streams, Netem: s.Netem, CC: cc}
						if err := writeScaling(w, d, base, caveat); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	render.WriteNotes(w, d)
	writeSendNote(w, d)
	return nil
}

// affinityWords says how --affinity pins the connections of a cell.
func affinityWords(a *matrix.Affinity) string {
	if len(a.Usable) > 0 {
		return fmt.Sprintf("auto over CPUs %s: each connection's client and server apart where there are two CPUs per connection, else sharing one", intList(a.Usable))
	}
	return a.String()
}

// writeScaling writes the scaling and connections tables of one setting
// (base without its transport and connection count); nothing where no
// column has a cell in it.
func writeScaling(w io.Writer, d *results.Document, base matrix.Cell, caveat string) error {
	s := d.Spec
	var cols []string
	for _, col := range s.Columns() {
		for _, n := range s.Conns {
			if r, ok := lookup(d, col, base, n); ok && r.Status != results.StatusNA {
				cols = append(cols, col)
				break
			}
		}
	}
	if len(cols) == 0 {
		return nil
	}
	cols = render.KernelFirst(d, cols)
	title := "encrypted"
	if !base.Crypto {
		title = "unencrypted"
	}
	if caveat != "" {
		fmt.Fprintln(w, caveat)
	}
	fmt.Fprintf(w, "Scaling, %s (%s), %s, %s messages, %s, %d stream(s) per connection%s: aggregate goodput in Mbit/s by connections, median of %s (fairness: Jain's index of the connections' goodput; Mbit/s per busy core)\n",
		base.Direction, dirWords(base.Direction), title, render.SizeName(base.Size), strings.TrimSpace(render.RowLabel(s, base.MTU, base.GSO)), s.Streams, render.ImpairTitle(&s, base.CC), s.RepeatText())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\t")
	for _, n := range s.Conns {
		fmt.Fprintf(tw, "%s\t", connWords(n))
	}
	fmt.Fprintln(tw)
	for _, col := range cols {
		fmt.Fprintf(tw, "%s\t", render.ColumnLabel(d, col))
		for _, n := range s.Conns {
			c := matrix.ColumnCell(col, base)
			c.Conns = n
			txt := render.FigureText(d, c, func(r *results.CellResult) (float64, bool) { return r.MedianBps / 1e6, true })
			if r, ok := d.Lookup(c); ok && r.Status == results.StatusOK {
				if sum := conns.SummaryOf(r); sum != nil {
					txt += fmt.Sprintf(" (%.2f; %.0f)", sum.Fairness, sum.BpsPerBusyCore/1e6)
				}
			}
			fmt.Fprintf(tw, "%s\t", txt)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "Connections: each one's median Mbit/s (client CPU > server CPU it was pinned to), and every CPU's median busy % (user/system/softirq %)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "transport\tconns\tMbit/s\tfairness\tper busy core\tper connection\tCPUs\t")
	for _, col := range cols {
		for _, n := range s.Conns {
			r, ok := lookup(d, col, base, n)
			if !ok || r.Status != results.StatusOK {
				continue
			}
			sum := conns.SummaryOf(r)
			if sum == nil {
				continue
			}
			fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.2f\t%.0f\t%s\t%s\t\n", render.ColumnLabel(d, col), n, r.MedianBps/1e6, sum.Fairness, sum.BpsPerBusyCore/1e6,
				connsText(r, sum), coresText(sum.Cores))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

// lookup is the cell of column col with n connections in the setting
// base.
func lookup(d *results.Document, col string, base matrix.Cell, n int) (*results.CellResult, bool) {
	c := matrix.ColumnCell(col, base)
	c.Conns = n
	return d.Lookup(c)
}

// connsText is a cell's connections: each one's median Mbit/s, with the
// CPUs its last sample pinned it to.
func connsText(r *results.CellResult, sum *conns.Summary) string {
	var pins []conns.Conn
	if len(r.Samples) > 0 {
		if s := conns.SampleOf(&r.Samples[len(r.Samples)-1]); s != nil {
			pins = s.Conns
		}
	}
	var out []string
	for i, bps := range sum.ConnBps {
		t := strconv.FormatFloat(bps/1e6, 'f', 0, 64)
		if i < len(pins) && pins[i].ClientCPU >= 0 {
			t += fmt.Sprintf("[%d>%d]", pins[i].ClientCPU, pins[i].ServerCPU)
		}
		out = append(out, t)
	}
	return strings.Join(out, " ")
}

// coresText is each CPU's busy % with its split: "cpu0 95(40/45/10)".
func coresText(cores []results.CoreCPU) string {
	var out []string
	for _, c := range cores {
		out = append(out, fmt.Sprintf("cpu%d %.0f(%.0f/%.0f/%.0f)", c.CPU, 100*c.Busy, 100*c.User, 100*c.System, 100*c.Softirq))
	}
	return strings.Join(out, " ")
}

func connWords(n int) string {
	if n == 1 {
		return "1 conn"
	}
	return fmt.Sprintf("%d conns", n)
}

func dirWords(dir matrix.Direction) string {
	if dir == matrix.Down {
		return "server to client"
	}
	return "client to server"
}

func intList(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// csvHead and csvRow are the bulk columns of the goodput CSV: none for a
// run without --conns (its CSV is what it always was).
func csvHead() []string {
	return []string{"conns", "median_fairness", "min_fairness", "median_mbps_per_busy_core", "median_busy_cores", "conn_median_mbps", "cores_busy_user_system_softirq"}
}

func csvRow(c results.CellResult) []string {
	row := []string{strconv.Itoa(ConnsOf(c.Cell))}
	sum := conns.SummaryOf(&c)
	if sum == nil {
		return append(row, make([]string, len(csvHead())-len(row))...)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	var per, cores []string
	for _, b := range sum.ConnBps {
		per = append(per, f(b/1e6))
	}
	for _, k := range sum.Cores {
		cores = append(cores, fmt.Sprintf("cpu%d:%s/%s/%s/%s", k.CPU, f(k.Busy), f(k.User), f(k.System), f(k.Softirq)))
	}
	return append(row, f(sum.Fairness), f(sum.MinFairness), f(sum.BpsPerBusyCore/1e6), f(sum.BusyCores), strings.Join(per, " "), strings.Join(cores, " "))
}
