package kquic

// queue is a FIFO that holds at most max items: what arrives while it is
// full is dropped and counted, never waited for, since the peer sends it.
// The connection's datagrams and events each have one. It is guarded by
// the owner's lock; sig is broadcast when an item is queued.
type queue[T any] struct {
	items   []T
	max     int
	dropped uint64
	sig     signal
}

func newQueue[T any](max int) queue[T] { return queue[T]{max: max} }

// push queues v, or drops it if the queue is full; it reports whether v was
// queued.
func (q *queue[T]) push(v T) bool {
	if len(q.items) >= q.max {
		q.dropped++
		return false
	}
	q.items = append(q.items, v)
	q.sig.broadcast()
	return true
}

// pop takes the oldest item.
func (q *queue[T]) pop() (T, bool) {
	var zero T
	if len(q.items) == 0 {
		return zero, false
	}
	v := q.items[0]
	q.items[0] = zero // no reference kept for the collector
	q.items = q.items[1:]
	if len(q.items) == 0 {
		q.items = nil // let the array go once drained
	}
	return v, true
}

// orDefault is n, or def where n is 0 (or negative: Config.validate refuses
// those).
func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}
