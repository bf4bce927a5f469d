package client

import (
	"math"
	"slices"
	"time"
)

// windowCap is the provider's cap on the part of each rate-limit window
// this client may use, for a key shared with integrations that must keep
// theirs (a dashboard sync, another pipeline): with a cap of 0.5 and an
// allowance of 60 per window, this client sends at most 30 in a window
// and leaves the rest, whatever the service says is remaining.
//
// windowCap is not safe for concurrent use: its budget's lock guards it.
type windowCap struct {
	// share is the part of each window this client may use, in (0, 1].
	share float64
	// taken counts our requests of the current window the service did not
	// refuse (a 429 is not counted against the allowance).
	taken int
}

func newWindowCap(share float64) *windowCap {
	if share <= 0 || share > 1 {
		share = 1
	}
	return &windowCap{share: share}
}

// allows says whether one more request fits this window's part of an
// allowance of limit requests (unknown while limit <= 0: nothing to cap).
func (c *windowCap) allows(limit int) bool {
	return c.share >= 1 || limit <= 0 || c.taken < c.of(limit)
}

// of is the cap in requests: at least one, or nothing would ever be sent.
func (c *windowCap) of(limit int) int {
	return max(int(math.Floor(c.share*float64(limit))), 1)
}

func (c *windowCap) send()    { c.taken++ }
func (c *windowCap) refused() { c.taken-- }
func (c *windowCap) turn()    { c.taken = 0 }

// keyShare paces this client's requests when other clients use the same
// key: other Terraform runs, other pipelines, a dashboard integration.
// There is no coordination service; what every client has is the
// service's count. When X-RateLimit-Remaining falls faster than our own
// requests explain, the difference is what the others took.
//
// Alone, the whole allowance is ours and is sent at once, which is the
// fastest a single run can go. Shared, requests go one at a time in
// rounds spread over the window: every client takes one turn per round,
// so each gets an equal part of the window, and the answers show how far
// the count fell between two of our requests: ours and one of each other
// client's (the round). The first request of a window goes when it turns;
// its answer gives our place in the count (rank), and every later round
// keeps that order: our request of round j goes j spacings after the
// turn plus rank offsets (see slot). Runs whose windows turn at slightly
// different moments (a run that started later, one that waited out a
// Retry-After in whole seconds) keep to their places instead of racing,
// so the fall between our first two requests of a window counts every
// client once, and the decisions below rest on this window's count of the
// clients rather than on older windows'. A client whose next turn would
// fall past the end of the allowance (what is left is less than a round),
// or past an equal part of the window, waits for the next window instead
// of sending a request to be refused, and those before it in the round
// take the rest. A run's last requests go at once (see finishes).
//
// The first window is a client's apprenticeship: one request at a time
// for learningTime, to see whether anybody else is there. With round trips
// too long for one request at a time to send our part of a window, rounds
// cannot be spread: as many turns go at once as a round trip needs, each
// as soon as it may, and a client that is ahead of the others over the
// windows they shared lets them go first. A window
// in which the service counted nobody else's request before ours does not
// prove that we are alone (ours may simply have been first), so a client
// goes back to whole windows only after aloneAfter of them.
//
// keyShare is not safe for concurrent use: its budget's lock guards it.
type keyShare struct {
	// shared is whether the last window showed other clients: requests go
	// one at a time.
	shared bool
	// windows counts the windows in which we sent.
	windows int
	// unseen counts the windows in a row in which we saw no other client.
	unseen int

	// The current window, as this client has seen it.
	sent, answered, refused int
	// othersSeen is whether an answer of this window showed requests of
	// other clients.
	othersSeen bool
	// roundSeen is whether this window showed a round (see forgetStaleRound).
	roundSeen bool
	// rank is our place in the window's count at our first answer of it
	// (1: first); 0 before that answer. Our later rounds of the window
	// keep this place (see slot).
	rank int
	// last is the remaining the answer to our latest request reported;
	// -1 before one.
	last int
	// fall is how far the count fell between two of our requests in a
	// row, ours included: one request of each client in the round. With
	// rounds spread over the window (see slot) it is the latest round
	// seen at the start of a window: every client keeps its place, so the
	// round counts each client once, and the clients that finished their
	// work are no longer counted in the next window. Otherwise it is the
	// mean of the last six rounds seen (falls), rounded: clients that send
	// at the same moment reach the service in any order, so one round may
	// count a client twice and the next not at all.
	fall  int
	falls []int
	// limit is the allowance per window, as the answers said.
	limit int
	// rtt is how long the answer to our latest request took, and rtts
	// the latest rttsRemembered of them.
	rtt  time.Duration
	rtts []time.Duration
	// window is how long the service's windows last, as far as its resets
	// tell; 0 while unknown.
	window time.Duration
	// queued is how many of our requests wait for the budget, the one
	// asking included (the budget keeps count with join; 0 when none
	// does).
	queued int
	// joined is whether a request ever joined the queue, and
	// answersSinceJoin how many answers came since the latest did (see
	// draining).
	joined           bool
	answersSinceJoin int
	// answeredAt is when, after the window turned, the answer to our
	// latest request came.
	answeredAt time.Duration
	// tailTried is whether we sent a request of this window that the
	// round did not allow (see tailTry) and it was refused or is on its
	// way; one that was counted shows nobody took the rest, and another
	// may follow.
	tailTried bool
	// tailOut is whether our request on its way is a tail try.
	tailOut bool
	// ahead is how many more requests than the other clients on average
	// we have had counted in the windows we shared so far (negative:
	// fewer).
	ahead float64
	// yield is how long after the window turns our first request of it
	// waits while we are yieldAhead or more ahead of the others; nothing
	// otherwise. The client that turns to a window first takes the
	// request an equal split leaves over; yielding passes it on to those
	// behind, so that clients that started with equal work end it close
	// together, and in the last window the client with the most left goes
	// first. When rounds cannot be spread (round trips too long for the
	// window) the yield is half a round trip, which keeps the rounds in
	// order: the yielding clients' requests fall between the others'.
	// With rounds spread it is half a spacing, and only for a client that
	// was first in the count of the last window and when an equal split
	// leaves requests over (ten requests and five clients leave none: a
	// yield would only delay the window's start).
	yield time.Duration
}

// learningTime is how long a client sends one request at a time in its
// first window before, having seen no other client, it takes the rest at
// once. It does not end sooner when answers come fast: runs started
// together by one pipeline reach the service a few hundred milliseconds
// apart (each Terraform process plans first), and a run that ended its
// apprenticeship after three quick answers took the window before the
// others' first requests came. It does not wait for answers either, so
// that slow writes (a fraud filter that takes seconds) do not hold a lone
// run back.
const learningTime = 500 * time.Millisecond

// aloneAfter is how many windows in a row without a sign of another client
// make a client take whole windows again.
const aloneAfter = 2

func newKeyShare() *keyShare { return &keyShare{last: -1, fall: 1} }

// turn starts a new window.
func (k *keyShare) turn() {
	if k.sent > 0 {
		k.windows++
		// Alone again only after aloneAfter windows without a sign of
		// another client: a client whose requests the service counted
		// before any other's in a window saw nobody, yet was not alone.
		if k.othersSeen {
			k.unseen = 0
		} else {
			k.unseen++
		}
		k.shared = k.unseen < aloneAfter && (k.shared || k.othersSeen)
		if k.shared || k.othersSeen {
			k.ahead += k.windowLead()
		}
		k.forgetStaleRound()
		k.yield = 0
		if sp, _ := k.spacing(); k.shared && k.ahead >= yieldAhead {
			if sp == 0 {
				k.yield = k.rtt / 2
			} else if k.rank == 1 && k.fall > 1 && k.limit%k.fall != 0 {
				k.yield = sp / 2
			}
		}
	}
	k.sent, k.answered, k.refused, k.othersSeen, k.last, k.rank = 0, 0, 0, false, -1, 0
	k.tailTried, k.tailOut, k.roundSeen = false, false, false
}

// forgetStaleRound lowers a round that the window ending could not
// confirm. With rounds spread, a client measures the round only by
// sending a second request, and it sends one only if the round leaves
// room for it: a round counted one too many (a disordered window) kept
// the last client of every round from its second request, and so from
// ever counting again, leaving a request of every window unused. The
// round is lowered by one a window, never below our place in the count
// (so many clients at least were counted before ours, ours included).
func (k *keyShare) forgetStaleRound() {
	if sp, _ := k.spacing(); sp > 0 && !k.roundSeen && k.rank > 0 && k.fall > k.rank {
		k.fall--
	}
}

// pacing is whether requests take turns: shared, or in the first window
// for learningTime unless another client showed (elapsed is the time since
// the window turned, or since the first request).
func (k *keyShare) pacing(elapsed time.Duration) bool {
	if k.windows == 0 && !k.othersSeen {
		return elapsed < learningTime
	}
	return k.shared || k.othersSeen
}

// turnsInFlight is how many of our requests may be on their way at once
// while taking turns: one, unless a round trip is so long that one at a
// time could not send our part of a window within it (slow writes).
func (k *keyShare) turnsInFlight() int {
	if k.windows == 0 || k.window <= 0 || k.rtt <= 0 || k.limit <= 0 {
		// In the first window the round is not known yet, and the first
		// round trips of a process that is starting are its slowest.
		return 1
	}
	part := float64(k.limit) / float64(max(k.round(), 1))
	return max(int(math.Ceil(part*float64(k.rtt)/float64(k.window))), 1)
}

// allows says whether one more request may go now, elapsed after the
// window turned.
func (k *keyShare) allows(elapsed time.Duration) bool {
	if !k.pacing(elapsed) {
		return true
	}
	inflight := k.sent - k.answered
	switch {
	case k.last < 0:
		// The first of a window has no round before it.
		return inflight == 0 && elapsed >= k.yield
	case k.finishes(inflight), k.tailTry(elapsed):
		return true
	case !k.hasShareLeft():
		return false
	case inflight == 0 && k.last >= 1 && k.othersSpent():
		return true
	case elapsed < k.slot():
		return false
	case inflight < k.turnsInFlight() && k.last >= k.round()*(inflight+1):
		// Our turn in the next round comes after one request of every
		// other client: it is within the allowance if that many are left
		// (for each of ours already on its way, a round more).
		return true
	}
	return false
}

// yieldAhead is how far a client must be ahead of the others, over the
// windows shared, to let them go first.
const yieldAhead = 0.5

// wakeAfter is when after the window turned a request held back by
// allows may go without news from an answer; 0 if none.
func (k *keyShare) wakeAfter() time.Duration {
	switch {
	case k.windows == 0 && !k.othersSeen:
		return learningTime
	case (k.shared || k.othersSeen) && k.yield > 0 && k.last < 0:
		return k.yield
	case k.tailWaiting():
		return k.tailAt()
	case k.slot() > 0:
		return k.slot()
	}
	return 0
}

// slot is how long after the window turned our next request may go while
// taking turns (0: at once). Rounds are spread over the window, and within
// a round each client goes at a moment set by its place in the first
// round, so that every round keeps the order of the first: clients whose
// windows turn a little apart (up to about half a spacing) stay in order
// instead of overtaking each other from one round to the next. The
// window's time is plentiful when it is shared (five runs send ten
// requests in a window of two seconds): spreading them costs nothing the
// window does not already make us wait, except in a run's last window,
// which ends with its last round rather than its first.
func (k *keyShare) slot() time.Duration {
	spacing, offset := k.spacing()
	if spacing <= 0 || k.rank <= 0 || k.othersStopped() {
		// (With the others stopped there is no round to keep in order:
		// the rest of the window is ours as fast as answers come.)
		return 0
	}
	// From the turn as this client took it: a client that yielded sent
	// its first request of the window later, and its place was counted
	// there.
	return k.yield + time.Duration(k.sent)*spacing + time.Duration(k.rank)*offset
}

// spacing is the time between two rounds, and offset the time between
// two places in a round; 0 when rounds cannot be spread (unknown window,
// round trips too long). It depends on the window and its allowance
// alone, so that every client on the key spaces its rounds alike (a
// spacing from each client's own count of the others let a client that
// counted one fewer go first in every round, and so count one fewer
// again): the rounds of two clients (half the allowance each) fill three
// quarters of the window, leaving the rest for clients whose windows turn
// late. With ten requests a window of two seconds, 300 ms. (A third of a
// second, which divides the second, put the fourth round exactly on the
// window's one-second mark: a client's whole-second resets never told it
// that its window had turned earlier than it thought, so clients that
// turned late stayed late. A request 900 ms after the turn, answered
// with a reset of one second, tells a client more than 100 ms late.)
func (k *keyShare) spacing() (spacing, offset time.Duration) {
	if !k.shared || k.window <= 0 || k.limit <= 0 || k.rtt <= 0 {
		return 0, 0
	}
	rounds := (k.limit + 1) / 2
	spacing = k.window * 3 / time.Duration(4*rounds)
	if spacing < 2*k.steadyRTT() {
		return 0, 0
	}
	return spacing, spacing / time.Duration(4*rounds)
}

// steadyRTT is the shortest of our latest round trips: writes that are
// slow (a fraud filter taking seconds) are slow every time, while a busy
// machine delays one answer now and then. Rounds spread by one and paced
// by the next would lose their order.
func (k *keyShare) steadyRTT() time.Duration {
	if len(k.rtts) == 0 {
		return k.rtt
	}
	return slices.Min(k.rtts)
}

// rttsRemembered is how many round trips steadyRTT is the shortest of.
const rttsRemembered = 4

// tailTry is whether to send a request that the round does not allow,
// once in a window: when the others had their turns (tailAt) and what we
// have waiting fits in what was left. The round keeps the rest of a window
// for the others' next turns; when the others have finished their work,
// nobody takes it, and a run whose last few requests would fit needs a
// whole window more. Only a client that is not ahead of the others tries:
// the one furthest behind is the one with the most work left. A run in the
// middle of its work has more waiting than a window's rest and never
// tries; near its end the try is answered 429 at worst, when the others
// did take the rest, and only where that refusal's Retry-After ends near
// the turn (see refusalLag).
func (k *keyShare) tailTry(elapsed time.Duration) bool {
	return k.tailWaiting() && k.ahead < 0 && k.queued >= 1 && k.queued <= k.last &&
		elapsed >= k.tailAt() && k.refusalLag(elapsed) <= k.cheapRefusalLag()
}

// tailAt is when after the window turned the others have had their turns
// since our latest answer, so that a tail try takes only what they left:
// tailPause after that answer, or with rounds spread, when our turn of the
// next round would have come (the others go at their places in the round,
// up to a spacing later than ours; a try sooner took the turn of a client
// that still had work, and was refused in its place).
// It is put off, if need be, to a moment when a refusal costs little (see
// refusalLag).
func (k *keyShare) tailAt() time.Duration {
	at := max(k.answeredAt+tailPause(k.rtt), k.slot())
	if lag := k.refusalLag(at); lag > k.cheapRefusalLag() {
		// A moment later the window's rest is a whole number of seconds.
		at += time.Second - lag
	}
	return at
}

// cheapRefusalLag is the longest refusalLag a tail try may risk: a tenth
// of the window.
func (k *keyShare) cheapRefusalLag() time.Duration { return k.window / 10 }

// refusalLag is how long after the window turns a client refused at
// elapsed would wait: the service's Retry-After is the rest of the window
// in whole seconds, rounded up, and it is honoured. Refused 50 ms before
// the turn, a client waits 950 ms past it, and every later window of the
// run turns that late for it (its turns then fall among the others' and
// take the rest of their rounds); refused with 1.1 s left, 0.9 s, it waits
// 100 ms. 0 while the window's length is unknown.
func (k *keyShare) refusalLag(elapsed time.Duration) time.Duration {
	left := k.window - elapsed
	if k.window <= 0 || left <= 0 {
		return 0
	}
	whole := (left + time.Second - 1) / time.Second * time.Second
	return whole - left
}

// tailWaiting is whether a tail try may come in this window.
func (k *keyShare) tailWaiting() bool {
	return !k.tailTried && k.shared && k.rtt > 0 && k.sent == k.answered && k.last >= 1 && k.last < k.round()
}

// tailPause is how long after our latest answer the others have had their
// turns: every client sends its next request when its answer is in, so
// within about a round trip of ours.
func tailPause(rtt time.Duration) time.Duration { return rtt * 3 / 2 }

// windowLead is how many more requests of the window that ends we had
// counted than the other clients on average (negative: fewer), as far as
// our latest answer showed. A client that stopped because its next turn
// would overrun the allowance counts the rest of the window as the
// others'.
func (k *keyShare) windowLead() float64 {
	if k.fall < 2 || k.limit <= 0 || k.last < 0 {
		return 0
	}
	counted := k.counted()
	others := k.limit - k.last - counted
	if k.last < k.fall {
		others = k.limit - counted
	}
	return float64(counted) - float64(others)/float64(k.fall-1)
}

// send records a request sent in this window.
func (k *keyShare) send() {
	if k.tailWaiting() {
		k.tailTried, k.tailOut = true, true
	}
	k.sent++
}

// observe learns from the answer to a request sent in this window;
// remaining is -1 when the answer did not say.
func (k *keyShare) observe(limit, remaining int, refused bool, rtt time.Duration) {
	k.answered++
	k.answersSinceJoin++
	k.rtt = rtt
	k.rtts = append(k.rtts, rtt)
	if len(k.rtts) > rttsRemembered {
		k.rtts = k.rtts[1:]
	}
	if k.tailOut {
		k.tailOut = false
		k.tailTried = refused
	}
	if refused {
		k.refused++
		k.last = 0
		if limit > 0 && k.sent-k.refused < limit {
			// Refused before we had sent the allowance: others took it.
			// (A run that starts while others use the key meets a full
			// window first; taken for alone, it would send its next
			// window at once, and most of it would be refused.)
			k.othersSeen = true
		}
		return
	}
	if limit <= 0 || remaining < 0 || remaining >= limit {
		return // nothing to learn from a count that does not add up
	}
	k.limit = limit
	if limit-remaining > k.sent-k.refused {
		// The service counted more than we have sent in this window. (A
		// request of ours may overtake another on the way, so its own
		// place in the count proves nothing.)
		k.othersSeen = true
		if len(k.falls) == 0 {
			// No round seen yet: every request the service counted
			// before this answer may belong to a client of its own,
			// each of which will take a turn before our next.
			k.fall = max(k.fall, limit-remaining)
		}
	}
	if (k.shared || k.othersSeen) && k.last >= 0 && remaining < k.last && k.sent == k.answered && (k.answered <= earlyRounds+1 || len(k.falls) == 0) {
		// Answers in order (one at a time): the fall between them is a
		// round. Only the first rounds of a window count: later, clients
		// that have taken their part no longer send, and the rounds
		// shrink while the clients on the key are as many as before.
		// Until a first round is seen, though, any: in a run's first
		// window the others may start a few rounds after it, and a
		// client that counted no round took the count per request of
		// its own, which counted its rounds alone, for the number of
		// clients.
		k.seeRound(k.last - remaining)
	}
	if k.rank == 0 {
		k.rank = limit - remaining
	}
	if k.last < 0 || remaining < k.last {
		k.last = remaining
	}
}

// seeRound takes in the fall of one round (see fall).
func (k *keyShare) seeRound(fall int) {
	k.falls = append(k.falls, fall)
	if len(k.falls) > roundsRemembered {
		k.falls = k.falls[1:]
	}
	if sp, _ := k.spacing(); sp > 0 {
		// Rounds in order: the latest is this window's count of clients.
		k.fall, k.roundSeen = fall, true
		return
	}
	sum := 0
	for _, f := range k.falls {
		sum += f
	}
	k.fall = int(math.Round(float64(sum) / float64(len(k.falls))))
}

// earlyRounds is how many rounds at the start of a window tell how many
// clients share the key.
const earlyRounds = 2

// roundsRemembered is how many rounds the fall is the mean of.
const roundsRemembered = 6

// lost records a request that got no answer (a transport error): it may
// or may not have been counted, and the next may go.
func (k *keyShare) lost() {
	k.answered++
	k.answersSinceJoin++
}

// round is how many requests the service counts between two of ours: the
// fall, or, when more than that, the window's count so far per request of
// ours. A client that turns to each window after the others sees only
// itself between two of its own requests (a fall of one) while the others
// took their turns before it.
func (k *keyShare) round() int {
	counted := k.counted()
	if k.last < 0 || counted < 1 || k.limit <= 0 {
		return k.fall
	}
	if k.othersStopped() {
		return 1
	}
	// Rounded down: a client that turned to the window a little after
	// the others has one of theirs more in the count, not another client.
	perOurs := (k.limit - k.last) / counted
	if len(k.falls) == 0 {
		return perOurs
	}
	// With one round seen, the count per request of ours alone would
	// undercount the clients that started a little after us (the window
	// counted only ours at first); a single round may count a client
	// twice, which only holds us back. Held back, a request waits for the
	// next window; sent and refused, its Retry-After (whole seconds) sets
	// our turns late for the windows that follow, out of the others' order.
	return max(k.fall, perOurs)
}

// othersStopped is whether, since our first answer of the window, the
// count fell by our own requests alone for two of our round trips: the
// others have stopped (finished their work) since the rounds we remember.
// (One round trip would not say so: the others may be yielding to us.)
// The window's count per request of ours would not tell: rounded down, it
// is one for a client that goes first in rounds of two.
func (k *keyShare) othersStopped() bool {
	counted := k.counted()
	return counted >= 3 && k.rank > 0 && k.last >= 0 && k.limit-k.last-k.rank == counted-1
}

// hasShareLeft is whether one more request keeps us within an equal part
// of the window, rounded up: with five clients and ten requests a window,
// two each. Rounds of five clients reach the service in any order, so the
// count of the round alone would let two of them take the same last
// request.
func (k *keyShare) hasShareLeft() bool {
	return k.sent-k.refused < k.share()
}

// share is an equal part of the window, rounded up (the whole allowance
// while we are alone or the allowance is unknown: no bound).
func (k *keyShare) share() int { return k.equalPart(k.round()) }

// equalPart is the window's allowance split among n clients, rounded up;
// no bound (math.MaxInt) for fewer than two clients or an unknown
// allowance.
func (k *keyShare) equalPart(n int) int {
	if n < 2 || k.limit <= 0 {
		return math.MaxInt
	}
	return (k.limit + n - 1) / n
}

// counted is how many of our requests of this window the service counted
// (answered and not refused).
func (k *keyShare) counted() int { return k.answered - k.refused }

// othersSpent is whether the other clients of the round have had their
// shares of the window (see hasShareLeft), so that the rest of it is ours:
// a client that started a little after the others had one turn fewer, and
// the last request of the window, left for the others' next turns, would
// go unused.
func (k *keyShare) othersSpent() bool {
	n := k.round()
	if n < 2 || k.limit <= 0 || k.last < 0 {
		return false
	}
	others := k.limit - k.last - k.counted()
	return others >= (n-1)*k.share()
}

// join counts a request that starts waiting for the budget.
func (k *keyShare) join() {
	k.queued++
	k.joined = true
	k.answersSinceJoin = 0
}

// draining is whether the work waiting is the last of the run: two of our
// answers have come since a request last joined the queue. In the middle
// of a run, Terraform starts an operation for each one that ends, so an
// answer is followed by a new request before the next answer; at the end
// nothing follows. (One answer would not say so: the request that follows
// it joins a moment later.)
func (k *keyShare) draining() bool {
	return k.joined && k.answersSinceJoin >= 2
}

// finishes is whether everything we have waiting may go at once: it is
// the last of the run, and it fits both in what the count left at our
// latest answer and in an equal part of the window among the clients of
// the latest round. (The round, not the count per request of ours: the
// others' last requests come at once too, and a client counted after them
// would see in that count more clients than there are.) Spread over the
// rounds, a run's last window would end with its last round (a second
// after the turn, with ten requests a window of two seconds); every run on
// the key ends its work in such a window when they started together.
func (k *keyShare) finishes(inflight int) bool {
	return k.shared && k.draining() && k.queued >= 1 && inflight+k.queued <= k.last &&
		k.sent-k.refused+k.queued <= k.equalPart(k.fall)
}
