package kquic

import "testing"

// TestQueueBound: a queue holds at most its bound, drops and counts what
// arrives while it is full, keeps the order of what it holds, takes items
// again once there is room, and wakes a waiter for each item it queues.
func TestQueueBound(t *testing.T) {
	q := newQueue[int](3)
	if _, ok := q.pop(); ok {
		t.Fatal("pop of an empty queue returned an item")
	}
	woken := q.sig.wait()
	for i := range 5 {
		if got, want := q.push(i), i < 3; got != want {
			t.Errorf("push(%d) = %v, want %v", i, got, want)
		}
	}
	select {
	case <-woken:
	default:
		t.Error("push did not wake the waiter")
	}
	if len(q.items) != 3 || q.dropped != 2 {
		t.Fatalf("after 5 pushes into 3 places: %d held, %d dropped; want 3 and 2", len(q.items), q.dropped)
	}
	if v, ok := q.pop(); v != 0 || !ok {
		t.Fatalf("pop = %d, %v; want the oldest, 0", v, ok)
	}
	if !q.push(5) || q.push(6) {
		t.Error("one pop made room for other than one item")
	}
	var got []int
	for {
		v, ok := q.pop()
		if !ok {
			break
		}
		got = append(got, v)
	}
	if want := []int{1, 2, 5}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("drained %v, want %v (the first ones, in order; the rest dropped)", got, want)
	}
	if q.dropped != 3 {
		t.Errorf("dropped %d, want 3", q.dropped)
	}
	if q.items != nil {
		t.Error("a drained queue keeps its array")
	}
	if !q.push(7) {
		t.Error("a drained queue refuses an item")
	}
}

// TestQueueDropsNothingUnderItsBound: a reader that keeps up loses nothing.
func TestQueueDropsNothingUnderItsBound(t *testing.T) {
	q := newQueue[int](2)
	for i := range 1000 {
		q.push(i)
		if v, ok := q.pop(); !ok || v != i {
			t.Fatalf("pop after push(%d) = %d, %v", i, v, ok)
		}
	}
	if q.dropped != 0 {
		t.Errorf("dropped %d", q.dropped)
	}
}

func TestOrDefault(t *testing.T) {
	for _, c := range [][3]int{{0, 7, 7}, {-1, 7, 7}, {3, 7, 3}} {
		if got := orDefault(c[0], c[1]); got != c[2] {
			t.Errorf("orDefault(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}
