package client

import (
	"testing"
	"time"
)

func TestWindowCap(t *testing.T) {
	cases := []struct {
		share       float64
		limit, want int
	}{
		{0.5, 10, 5},
		{0.5, 9, 4},   // rounded down: the cap is a ceiling
		{0.05, 10, 1}, // at least one, or nothing would ever go
		{0, 10, 10},   // unset: no cap
		{1.5, 10, 10}, // nonsense: no cap
	}
	for _, c := range cases {
		wc := newWindowCap(c.share)
		n := 0
		for n < c.limit && wc.allows(c.limit) {
			wc.send()
			n++
		}
		if n != c.want {
			t.Errorf("share %v of %d: %d requests allowed, want %d", c.share, c.limit, n, c.want)
		}
		wc.refused() // a 429 is not counted by the service: one more may go
		if c.want < c.limit && !wc.allows(c.limit) {
			t.Errorf("share %v of %d: a refused request still counts against the cap", c.share, c.limit)
		}
		wc.turn()
		if !wc.allows(c.limit) {
			t.Errorf("share %v of %d: a new window does not allow a request", c.share, c.limit)
		}
	}
	if !newWindowCap(0.5).allows(-1) {
		t.Error("a cap holds back requests of a budget not learnt yet")
	}
}

// fakeWindow is the service's count for one key in one window, with other
// clients' requests added by hand.
type fakeWindow struct{ limit, count int }

// answer is what the service tells k about one of its requests: the
// request is counted (or refused when the window is full).
func (w *fakeWindow) answer(k *keyShare) {
	refused := w.count >= w.limit
	if !refused {
		w.count++
	}
	k.observe(w.limit, w.limit-w.count, refused, 100*time.Millisecond)
}

// sendAndAnswer sends n requests of k one after another, each answered
// before the next, as far as k allows; it returns how many went.
func sendAndAnswer(k *keyShare, w *fakeWindow, n int) int {
	sent := 0
	for sent < n && k.allows(time.Second) {
		k.send()
		w.answer(k)
		sent++
	}
	return sent
}

// sharedAfterRounds is a keyShare that has shared a window with others,
// in three rounds of n clients.
func sharedAfterRounds(n int) *keyShare {
	k := newKeyShare()
	k.shared, k.windows = true, 1
	for range 3 {
		k.seeRound(n)
	}
	return k
}

// startWindow turns k and the service to a new window.
func startWindow(k *keyShare, limit int) *fakeWindow {
	k.turn()
	return &fakeWindow{limit: limit}
}

func TestKeyShareAloneTakesWholeWindows(t *testing.T) {
	k := newKeyShare()
	w := &fakeWindow{limit: 10}
	// The first window: one at a time for learningTime, however fast
	// the answers come, then the rest at once.
	for i := range 5 {
		elapsed := time.Duration(i) * learningTime / 5
		if !k.allows(elapsed) {
			t.Fatal("the first request of the first window is held back")
		}
		k.send()
		if k.allows(elapsed) {
			t.Fatal("a second request goes before the first is answered, in the first window")
		}
		w.answer(k)
	}
	for range 5 {
		if !k.allows(learningTime) {
			t.Fatal("alone after learning, a request is held back")
		}
		k.send() // all on their way at once
	}
	startWindow(k, 10)
	for range 10 {
		if !k.allows(0) {
			t.Fatal("alone, a request of a new window is held back")
		}
		k.send()
	}
}

func TestKeyShareTakesTurnsWhenOthersAppearMidWindow(t *testing.T) {
	k := newKeyShare()
	w := &fakeWindow{limit: 10}
	sendAndAnswer(k, w, 3)
	w = startWindow(k, 10)
	// Alone: two go at once; before they are answered, another client
	// takes three.
	k.send()
	k.send()
	w.count += 3
	w.answer(k)
	w.answer(k)
	if !k.othersSeen {
		t.Fatal("a count above ours did not show the other client")
	}
	if !k.allows(time.Second) {
		t.Fatal("with nothing on its way and 5 left, our turn is held back")
	}
	k.send()
	if k.allows(time.Second) {
		t.Error("shared, a second request goes before the first is answered")
	}
}

func TestKeyShareStopsWhereTheRoundWouldOverrun(t *testing.T) {
	k := newKeyShare()
	w := &fakeWindow{limit: 10}
	sendAndAnswer(k, w, 3)
	w = startWindow(k, 10)
	w.count += 2 // two others went first
	// Rounds: ours, then one of each of the two others.
	for k.allows(time.Second) {
		k.send()
		w.answer(k)
		w.count = min(w.count+2, w.limit)
	}
	// Ours were counted at 3, 6, 9: after the last, 1 was left and the
	// round (3) would overrun it, so we stopped; the others took it.
	if k.sent != 3 || k.refused != 0 {
		t.Errorf("sent %d (%d refused), want 3 and none refused", k.sent, k.refused)
	}
	if k.fall != 3 {
		t.Errorf("fall = %d, want 3 (ours and one of each of two others)", k.fall)
	}
}

func TestKeyShareGoesBackToWholeWindowsWhenOthersLeave(t *testing.T) {
	k := newKeyShare()
	w := &fakeWindow{limit: 10}
	sendAndAnswer(k, w, 3)
	w = startWindow(k, 10)
	w.count += 5
	sendAndAnswer(k, w, 2)
	if !k.othersSeen {
		t.Fatal("others not seen")
	}
	// The others leave: windows in which only we send.
	for i := range aloneAfter {
		w = startWindow(k, 10)
		if !k.pacing(0) {
			t.Fatalf("alone again after %d windows without others, want %d", i, aloneAfter)
		}
		sendAndAnswer(k, w, 3)
	}
	w = startWindow(k, 10)
	if k.pacing(0) {
		t.Fatal("still taking turns after the others left")
	}
	if n := sendAndAnswer(k, w, 10); n != 10 {
		t.Errorf("alone, %d of 10 went", n)
	}
}

// A client that turns to each window after the others sees only itself
// between two of its requests (a fall of one), yet the window's count per
// request of ours shows the others: it keeps to a round of them and to an
// equal part of the window.
func TestKeyShareLateClientCountsTheOthers(t *testing.T) {
	k := newKeyShare()
	k.shared, k.windows = true, 1
	k.seeRound(1)
	k.seeRound(1)
	w := startWindow(k, 10)
	w.count += 8 // four others, two each, before our first
	k.send()
	w.answer(k) // counted ninth: 1 left
	if got := k.round(); got != 9 {
		t.Errorf("round = %d, want 9 (the window's count per request of ours)", got)
	}
	if k.allows(time.Second) {
		t.Error("a late client sends a second request into a window the others have filled")
	}
	// Five clients of ten a window: two each, whatever is left.
	k = newKeyShare()
	k.shared, k.windows, k.limit = true, 1, 10
	for range 3 {
		k.seeRound(5)
	}
	w = startWindow(k, 10)
	sent := 0
	for k.allows(time.Second) && sent < 10 {
		k.send()
		w.answer(k)
		sent++
		// Only two of the four others come between ours (the rest are
		// late): after two of ours 6 are left, more than a round of
		// five, yet two is our part.
		w.count = min(w.count+2, w.limit)
	}
	if sent != 2 {
		t.Errorf("%d of ours went, want 2 (an equal part of the window among five)", sent)
	}
}

// A client that is the only one counted in a window, after rounds with
// others, has the window to itself: the others have finished. It takes the
// last request rather than leave it to them.
func TestKeyShareTakesTheRestWhenTheOthersHaveStopped(t *testing.T) {
	k := sharedAfterRounds(3)
	w := startWindow(k, 10)
	if n := sendAndAnswer(k, w, 10); n != 10 {
		t.Errorf("alone in the window after rounds of three, %d of 10 went", n)
	}
}

// Two clients taking turns, ours first in every round: after five rounds
// the count has fallen by nine for our five requests, under two per
// request of ours once rounded down. That is not a sign that the other
// client stopped: we take our five and leave it the rest.
func TestKeyShareFirstOfTwoTakesItsHalfOnly(t *testing.T) {
	k := sharedAfterRounds(2)
	w := startWindow(k, 10)
	ours := 0
	for k.allows(time.Second) {
		k.send()
		w.answer(k)
		ours++
		w.count = min(w.count+1, w.limit) // the other client's turn
	}
	if ours != 5 {
		t.Errorf("first of two in every round, %d of 10 went, want 5", ours)
	}
}

// Clients sending at the same moment reach the service in any order: one
// round may count a client twice and the next not at all. The round is
// the mean of the last six, so such rounds change nothing, and a client
// that left shows within four rounds (two windows).
func TestKeyShareRoundIgnoresDisorderedRounds(t *testing.T) {
	k := newKeyShare()
	for _, fall := range []int{5, 5, 6, 4, 5, 3} {
		k.seeRound(fall)
	}
	if k.fall != 5 {
		t.Errorf("fall = %d after rounds 5, 5, 6, 4, 5, 3; want 5", k.fall)
	}
	for range 4 {
		k.seeRound(4)
	}
	if k.fall != 4 {
		t.Errorf("fall = %d after a client left (rounds 5, 3, 4, 4, 4, 4 remembered); want 4", k.fall)
	}
}

// A leader lets the others go first in the next window, by half a round
// trip; a client no longer ahead over the windows shared goes at once.
func TestKeyShareLeaderYields(t *testing.T) {
	k := newKeyShare()
	w := &fakeWindow{limit: 10}
	sendAndAnswer(k, w, 3)
	w = startWindow(k, 10)
	for range 4 {
		k.send()
		w.answer(k)
		w.count += 2
	}
	startWindow(k, 10) // we took 4, the others 3 each
	if k.yield != k.rtt/2 {
		t.Fatalf("ahead of the others, the client yields %v, want half a round trip (%v)", k.yield, k.rtt/2)
	}
	if k.allows(0) {
		t.Error("yielding, the first request of the window goes at once")
	}
	if !k.allows(k.rtt / 2) {
		t.Error("yielding, the first request is still held after half a round trip")
	}
	// The next window we take 2 and the others 4 each: no longer ahead
	// over the two windows (the round between our two looked like 6, so
	// the estimate is not exact), we go at once.
	w = &fakeWindow{limit: 10}
	w.count = 3
	k.send()
	w.answer(k) // counted fourth
	w.count = 9
	k.send()
	w.answer(k) // counted last
	startWindow(k, 10)
	if k.ahead >= 1 || k.yield != 0 {
		t.Errorf("after a window behind the others (ahead %.2f), the client yields %v", k.ahead, k.yield)
	}
}

// Slow writes (a fraud filter taking seconds) must not hold a lone run to
// one request at a time: the first window's apprenticeship ends after
// learningTime even with no answer in.
func TestKeyShareLearningEndsAfterLearningTime(t *testing.T) {
	k := newKeyShare()
	k.send()
	if k.allows(learningTime / 2) {
		t.Fatal("a second request goes while the first is out, early in the first window")
	}
	if got := k.wakeAfter(); got != learningTime {
		t.Errorf("wakeAfter = %v, want %v: a held request must look again then", got, learningTime)
	}
	for range 9 {
		if !k.allows(learningTime) {
			t.Fatal("after learningTime, alone as far as we know, a request is held back")
		}
		k.send()
	}
}

// Taking turns with round trips longer than a window allows: one request
// at a time could not send our part, so as many go at once as a round
// trip needs, each within a round of what is left.
func TestKeyShareSlowRoundTripsAllowMoreInFlight(t *testing.T) {
	k := newKeyShare()
	k.shared, k.windows, k.fall, k.limit, k.last = true, 1, 2, 20, 12
	k.window, k.rtt = 2*time.Second, 2*time.Second // our part, 10, in one round trip
	if got := k.turnsInFlight(); got != 10 {
		t.Fatalf("turnsInFlight = %d, want 10", got)
	}
	sent := 0
	for k.allows(time.Second) {
		k.send()
		sent++
	}
	// 12 left and a round of 2: turns at 12, 10, 8, 6, 4, 2 fit.
	if sent != 6 {
		t.Errorf("%d went at once, want 6 (each within a round of what is left)", sent)
	}
	k.rtt = 100 * time.Millisecond
	if got := k.turnsInFlight(); got != 1 {
		t.Errorf("turnsInFlight = %d with quick round trips, want 1", got)
	}
}

// A run that starts while others use the key meets a full window: its
// first answers are refusals. They prove others are there (we had not sent
// the allowance), so it takes turns rather than send its next window at
// once.
func TestKeyShareRefusalsBeforeOurAllowanceShowOthers(t *testing.T) {
	k := newKeyShare()
	w := &fakeWindow{limit: 10, count: 10}
	k.send()
	w.answer(k)
	if !k.othersSeen {
		t.Fatal("refused with none of ours counted, the client does not see others")
	}
	startWindow(k, 10)
	k.send()
	if k.allows(learningTime) {
		t.Error("after a window of refusals, a second request goes while the first is out")
	}
}

// The round keeps the rest of a window for the others' next turns. When
// they have finished their work nobody takes it: a run whose last few
// requests fit in it tries once, after the others had their turns; a run
// in the middle of its work (more waiting than the rest) does not, nor one
// that is not behind the others.
func TestKeyShareTailTry(t *testing.T) {
	setUp := func(queued int) (*keyShare, *fakeWindow) {
		k := sharedAfterRounds(3)
		w := startWindow(k, 10)
		w.count = 1 // another run went first
		for k.allows(0) {
			k.send()
			w.answer(k)
			w.count = min(w.count+2, w.limit)
		}
		// Ours were counted at 2, 5, 8: 2 left after the last, and the
		// round (3) keeps them for the others' next turns; one of them
		// had work for one more.
		k.answeredAt, k.queued = 0, queued
		k.ahead = -0.5 // a little behind the others over the run
		return k, w
	}
	k, _ := setUp(1)
	if k.allows(tailPause(k.rtt) / 2) {
		t.Error("the tail try goes before the others had their turns")
	}
	if !k.allows(tailPause(k.rtt)) {
		t.Fatal("one request waiting, the rest of the window kept for the others: no tail try")
	}
	k.send()
	k.observe(10, 0, false, k.rtt)
	if k.allows(time.Second) {
		t.Error("a second tail try in the same window")
	}
	k, _ = setUp(5)
	if k.allows(time.Second) {
		t.Error("five requests waiting, more than the rest of the window: a tail try")
	}
	k, _ = setUp(1)
	k.ahead = 0
	if k.allows(time.Second) {
		t.Error("level with the others, a tail try (the one behind has more left)")
	}
}

// sharedKey is a keyShare that has shared windows of 2 s and 10 requests
// with four other clients, at round trips of 100 ms.
func sharedKey() *keyShare {
	k := newKeyShare()
	k.shared, k.windows = true, 1
	k.window, k.limit, k.rtt = 2*time.Second, 10, 100*time.Millisecond
	k.seeRound(5)
	k.seeRound(5)
	return k
}

// Rounds are spread over the window, and each client keeps in every round
// the place its first request had in the count. Ten requests a window
// make room for five rounds (two clients) in three quarters of the window,
// 300 ms apart; the client counted third goes three offsets into the
// second round.
func TestKeyShareRoundsKeepTheFirstRoundsOrder(t *testing.T) {
	k := sharedKey()
	w := startWindow(k, 10)
	if !k.allows(0) {
		t.Fatal("the first request of a shared window waits")
	}
	k.send()
	w.count += 2 // two other clients were counted before ours
	w.answer(k)
	if k.rank != 3 {
		t.Fatalf("rank = %d, want 3", k.rank)
	}
	spacing, offset := k.spacing()
	if spacing != 300*time.Millisecond || offset != spacing/20 {
		t.Fatalf("spacing, offset = %v, %v; want 300ms (five rounds in three quarters of the window) and a twentieth of that", spacing, offset)
	}
	slot := spacing + 3*offset
	if k.allows(slot - time.Millisecond) {
		t.Errorf("the second request goes before its slot (%v)", slot)
	}
	if got := k.wakeAfter(); got != slot {
		t.Errorf("wakeAfter = %v, want the slot %v", got, slot)
	}
	if !k.allows(slot) {
		t.Errorf("the second request is held back at its slot (%v)", slot)
	}
}

// Round trips too long for the rounds to be spread over the window (slow
// writes): requests go as soon as the round allows.
func TestKeyShareSlowRoundTripsAreNotSpread(t *testing.T) {
	k := sharedKey()
	k.rtt = time.Second
	if spacing, _ := k.spacing(); spacing != 0 {
		t.Errorf("spacing = %v with round trips of half the window; want none", spacing)
	}
	startWindow(k, 10)
	k.send()
	k.observe(10, 9, false, time.Second)
	if k.slot() != 0 || !k.allows(0) {
		t.Error("with rounds not spread, the next request waits for a slot")
	}
}

// With rounds in order, a round counts each client once: the latest is
// this window's count of clients, and clients that finished their work
// stop being counted at once instead of over several windows.
func TestKeyShareSpreadRoundsFollowClientsLeaving(t *testing.T) {
	k := sharedKey()
	k.seeRound(3)
	if k.fall != 3 {
		t.Errorf("fall = %d after rounds 5, 5, 3 spread over the window; want 3", k.fall)
	}
}

// A round counted one too many keeps the last client of every round from
// its second request, and so from counting again: a window without a
// round lowers it by one, never below our place in the count.
func TestKeyShareForgetsARoundNoWindowConfirms(t *testing.T) {
	k := sharedKey()
	k.seeRound(6) // a disordered window counted one client twice
	for window, want := range []int{6, 5, 5} {
		w := startWindow(k, 10)
		if k.fall != want {
			t.Fatalf("window %d: fall = %d, want %d", window, k.fall, want)
		}
		k.send()
		w.count += 4 // counted fifth: last of five clients
		w.answer(k)
		if k.fall == 6 && k.allows(time.Second) {
			t.Fatal("with a round of six and five left, a second request goes")
		}
	}
}

// With rounds spread, only the client counted first in the last window
// yields, by half a spacing, and only when an equal split leaves requests
// over; its later rounds keep the place it was counted at.
func TestKeyShareSpreadRoundsYieldOnlyForRequestsLeftOver(t *testing.T) {
	for _, c := range []struct {
		clients   int
		wantYield bool
	}{{5, false}, {3, true}} {
		k := sharedKey()
		k.seeRound(c.clients)
		k.seeRound(c.clients)
		k.ahead, k.rank, k.sent, k.answered = 1, 1, 1, 1 // counted first in the last window
		startWindow(k, 10)
		spacing, _ := k.spacing()
		if got := k.yield > 0; got != c.wantYield {
			t.Errorf("%d clients on 10 requests: yield %v, want a yield: %v", c.clients, k.yield, c.wantYield)
		}
		if c.wantYield && k.yield != spacing/2 {
			t.Errorf("%d clients: yield %v, want half a spacing (%v)", c.clients, k.yield, spacing/2)
		}
		// Counted last of the first round, the client keeps that place
		// from the moment it sent, not from the turn.
		k.send()
		k.observe(10, 10-c.clients, false, 100*time.Millisecond)
		spacing, offset := k.spacing()
		if want := k.yield + spacing + time.Duration(c.clients)*offset; k.slot() != want {
			t.Errorf("%d clients: second request at %v, want %v", c.clients, k.slot(), want)
		}
	}
}

// With rounds spread, the others' turns of a round come up to a spacing
// after ours: a tail try waits for our own turn of the next round, so that
// it takes only what clients still working have left, and then for a
// moment when a refusal would not hold us long past the turn.
func TestKeyShareSpreadTailTryWaitsForTheNextRound(t *testing.T) {
	k := sharedKey()
	k.seeRound(3)
	k.seeRound(3)
	w := startWindow(k, 10)
	w.count = 1 // another run went first
	for k.allows(k.slot()) {
		k.send()
		w.answer(k)
		w.count = min(w.count+2, w.limit)
	}
	// Ours were counted at 2, 5, 8: 2 left, less than a round of three.
	spacing, _ := k.spacing()
	k.answeredAt, k.queued, k.ahead = 2*spacing+k.rtt, 1, -0.5
	if k.allows(k.answeredAt + tailPause(k.rtt)) {
		t.Errorf("the tail try goes %v after our answer, before the others' turns of the next round", tailPause(k.rtt))
	}
	next := k.slot()
	if next <= k.answeredAt+tailPause(k.rtt) {
		t.Fatalf("slot %v is not after the tail pause: the test shows nothing", next)
	}
	// Refused at our turn of the next round (930 ms), we would wait out a
	// Retry-After of one second, to 930 ms past the turn; at the window's
	// one-second mark the Retry-After ends with the window.
	if k.allows(next) {
		t.Errorf("a tail try at %v, where a refusal would hold us %v past the turn", next, k.refusalLag(next))
	}
	if got := k.wakeAfter(); got != time.Second {
		t.Errorf("wakeAfter = %v, want the window's one-second mark after our turn of the next round", got)
	}
	if !k.allows(time.Second) {
		t.Error("no tail try at the window's one-second mark")
	}
	if k.allows(1500 * time.Millisecond) {
		t.Errorf("a tail try at 1.5 s, where a refusal would hold us %v past the turn", k.refusalLag(1500*time.Millisecond))
	}
}

func TestKeyShareRefusalLag(t *testing.T) {
	k := sharedKey() // windows of 2 s
	for _, c := range []struct{ elapsed, want time.Duration }{
		{0, 0},
		{100 * time.Millisecond, 100 * time.Millisecond},
		{930 * time.Millisecond, 930 * time.Millisecond},
		{time.Second, 0},
		{1950 * time.Millisecond, 950 * time.Millisecond},
		{3 * time.Second, 0}, // past the window: nothing to wait for
	} {
		if got := k.refusalLag(c.elapsed); got != c.want {
			t.Errorf("refusalLag(%v) = %v, want %v", c.elapsed, got, c.want)
		}
	}
	k.window = 0
	if got := k.refusalLag(time.Second); got != 0 {
		t.Errorf("window unknown: refusalLag = %v, want 0", got)
	}
}

// When only our requests have been counted since our first answer, for
// two round trips, the others have finished: the rest of the window goes
// as fast as answers come, not a spacing apart.
func TestKeyShareSpreadRoundsEndWhenTheOthersStop(t *testing.T) {
	k := sharedKey()
	w := startWindow(k, 10)
	w.count = 4 // the others' last requests, before our first
	for range 3 {
		if !k.allows(k.slot()) {
			t.Fatal("a request is held back at its slot")
		}
		k.send()
		w.answer(k)
	}
	if !k.othersStopped() {
		t.Fatal("three of ours in a row counted alone: the others are not seen to have stopped")
	}
	if got := k.slot(); got != 0 {
		t.Errorf("slot = %v with the others stopped, want 0 (no spacing)", got)
	}
	if !k.allows(0) {
		t.Error("with the others stopped, a request waits")
	}
}

// A busy machine delays one answer now and then: the rounds stay spread,
// or one client would pace its requests while the others spread theirs.
// Writes that are slow every time are not spread.
func TestKeyShareOneSlowAnswerKeepsRoundsSpread(t *testing.T) {
	k := sharedKey()
	for _, rtt := range []time.Duration{100, 100, 100, 400} {
		k.observe(10, 5, false, rtt*time.Millisecond)
	}
	if sp, _ := k.spacing(); sp == 0 {
		t.Error("one answer of 400 ms among answers of 100 ms stops the spreading")
	}
	for range rttsRemembered {
		k.observe(10, 5, false, 400*time.Millisecond)
	}
	if sp, _ := k.spacing(); sp != 0 {
		t.Errorf("every answer 400 ms (more than half the spacing): rounds still spread %v apart", sp)
	}
}

// Two clients, ours started a round late: the other has had its five (an
// equal part of the window), ours four, and one is left. Nobody else will
// take it: it is ours, though a round would keep it for the other.
func TestKeyShareTakesTheRestWhenTheOthersHaveHadTheirShares(t *testing.T) {
	k := sharedKey()
	k.seeRound(2)
	k.seeRound(2)
	w := startWindow(k, 10)
	w.count = 1 // the other's first request, a round before ours
	ours := 0
	for k.allows(k.slot()) {
		k.send()
		w.answer(k)
		ours++
		if w.count < 9 {
			w.count++ // the other's turn, up to its five
		}
	}
	if ours != 5 || w.count != 10 {
		t.Errorf("%d of ours went and the window counted %d, want 5 and all 10", ours, w.count)
	}
}

// In its first window a run was alone for three requests, then another
// started: the rounds it sees from then on (two) count the clients, not
// the window's count per request of ours (one, rounded down), which would
// let it take the other's part.
func TestKeyShareCountsALateStartersRounds(t *testing.T) {
	k := newKeyShare()
	w := &fakeWindow{limit: 10}
	for range 3 {
		k.send()
		w.answer(k)
	}
	ours := 3
	for k.allows(learningTime) && w.count < w.limit {
		k.send()
		w.answer(k)
		ours++
		w.count = min(w.count+1, w.limit) // the other run, one per round
	}
	if k.round() != 2 || ours > 6 {
		t.Errorf("round = %d and %d of ours went, want 2 and at most 6 (three alone and three of the rounds of two)", k.round(), ours)
	}
}

// The last requests of a run go at once when they fit in the window's
// rest and in an equal part of it, instead of a round apart: no request
// joined the queue for two answers, so no more will come.
func TestKeyShareLastRequestsGoAtOnce(t *testing.T) {
	setUp := func(queued int) *keyShare {
		k := sharedKey()
		k.seeRound(3)
		k.seeRound(3)
		for range queued + 2 {
			k.join()
		}
		w := startWindow(k, 10)
		for range 2 {
			if !k.allows(k.slot()) {
				t.Fatal("a request is held back at its slot")
			}
			k.send()
			k.queued--
			w.answer(k)
			w.count += 2 // the two other runs
		}
		return k
	}
	k := setUp(2)
	early := k.slot() - 200*time.Millisecond
	for range 2 {
		if !k.allows(early) {
			t.Fatalf("the run's last two requests (four of a part of four, six left) wait for their rounds")
		}
		k.send()
		k.queued--
	}
	if k := setUp(3); k.allows(early) {
		t.Error("three last requests, one more than our part of the window: they go at once")
	}
	k = setUp(1)
	k.join() // Terraform started another operation: two wait, not the end
	if k.allows(early) {
		t.Error("a request joined the queue since our latest answer, yet the rest goes at once")
	}
}
