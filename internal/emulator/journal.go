package emulator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// A data file (-data) is a snapshot of the whole store, rewritten
// atomically (saveStore), and a journal beside it, <file>.journal, of the
// clients' changes since: one JSON line each, appended and synced before
// the change is made and answered. A create, change, delete or click so
// costs a line, not the store: a million links are a snapshot of 400 MB,
// which took seconds to write for every change and held every other
// request meanwhile. The snapshot is rewritten, and the journal emptied,
// once the journal holds 1,000 lines or an eighth as many as the store
// holds links and clicks, if more (so a change costs about eight links'
// worth of writing however large the account), at Close, and by the admin
// and seeding helpers, whose changes no line describes.
//
// The clients' changes fold in the background (foldLocked): the store is
// copied under the lock, written beside the data file without it, and put
// in its place once written, so that a million links hold every request
// for the copy (tens of milliseconds) rather than for the seconds the
// writing takes (BenchmarkFold). The lines written meanwhile are kept, and only they
// stay in the journal; a crash before then leaves the old snapshot and the
// whole journal, which replay reads as before.

// change is one line of the journal.
type change struct {
	// N numbers the changes of the store: a snapshot keeps the number of
	// the last it holds (store.Changes), so a line written before the
	// snapshot replaced the journal is not applied twice.
	N       int64  `json:"n"`
	Put     *Link  `json:"put,omitempty"`     // a link created or changed
	Month   string `json:"month,omitempty"`   // a create: the month (UTC) its quota counts it in
	Deleted string `json:"deleted,omitempty"` // a deleted link's ID
	Click   *Click `json:"click,omitempty"`
}

// apply makes the change in st, on replay as when it was made.
func (st *store) apply(c change) {
	switch {
	case c.Put != nil && st.Links[c.Put.ID] != nil:
		st.replaceLink(c.Put)
	case c.Put != nil:
		st.addLink(c.Put)
		st.NextSeq = max(st.NextSeq, c.Put.Seq)
		if a := st.Accounts[c.Put.AccountID]; a != nil && c.Month != "" {
			if a.CreatedByMonth == nil {
				a.CreatedByMonth = map[string]int{}
			}
			a.CreatedByMonth[c.Month]++
		}
	case c.Deleted != "":
		st.removeLink(c.Deleted)
	case c.Click != nil:
		st.Clicks = append(st.Clicks, *c.Click)
	}
	st.Changes = c.N
}

// journalPath is where the journal of a data file is kept.
func journalPath(dataFile string) string { return dataFile + ".journal" }

// replayJournal applies to st the lines of the journal it does not hold
// yet, and returns how many lines the journal has. A last line cut short
// (a crash while it was written; its change was never answered) is left
// out, and cut off the file, so that the next line is not appended to it;
// any other line that cannot be read is an error.
func replayJournal(path string, st *store) (lines int, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var whole int64 // the bytes of the whole lines read
	for {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(line) > 0 { // a last line cut short
				return lines, f.Truncate(whole)
			}
			return lines, nil
		}
		if err != nil {
			return lines, err
		}
		whole += int64(len(line))
		lines++
		var c change
		if err := json.Unmarshal(bytes.TrimSpace(line), &c); err != nil || c.N == 0 {
			return lines, fmt.Errorf("reading %s: line %d is not a change: %q", path, lines, bytes.TrimSpace(line))
		}
		if c.N > st.Changes {
			st.apply(c)
		}
	}
}

// commitLocked makes a client's change: a line of the journal first, then
// the change in the store, by the same apply that replays the journal. A
// line that cannot be written leaves the store as it was (and the journal:
// a part written is cut off), so the request fails without changing
// anything, as a real service's failed write would. A journal due to be
// folded into a new snapshot is folded after the change; a fold that fails
// leaves the journal, which still holds every change, and is kept for
// PersistError. Called with s.mu held.
func (s *Server) commitLocked(c change) error {
	c.N = s.st.Changes + 1
	if s.dataFile != "" {
		if err := s.journalLocked(c); err != nil {
			return err
		}
	}
	s.st.apply(c)
	if s.dataFile != "" && !s.folding && s.journalLines >= max(1000, (len(s.st.Links)+len(s.st.Clicks))/8) {
		s.foldLocked()
	}
	return nil
}

// foldLocked starts writing a snapshot of the store as it is now, in the
// background, and keeps the journal's lines from now on: once the snapshot
// is in place they are all the journal needs. A snapshot written by
// snapshotLocked meanwhile is newer: the fold's is then dropped. A fold
// that fails leaves the data file and the journal as they were, whole, and
// is kept for PersistError. Called with s.mu held.
func (s *Server) foldLocked() {
	st, n := s.st.copyToSave(), s.beginSnapshotLocked()
	s.folding, s.linesSinceFold = true, nil
	s.folds.Add(1)
	go func() {
		defer s.folds.Done()
		tmp, err := s.writeFold(s.dataFile, st)
		s.mu.Lock()
		defer s.mu.Unlock()
		kept := s.linesSinceFold
		s.folding, s.linesSinceFold = false, nil
		switch {
		case err == nil && n < s.savedSnapshot:
			_ = os.Remove(tmp)
		case err == nil:
			err = s.putSnapshotLocked(tmp, n, kept)
		}
		if err != nil {
			s.persistErr = err
		}
	}()
}

// beginSnapshotLocked numbers a snapshot about to be taken, so that one
// written later than a newer one is not put in its place.
func (s *Server) beginSnapshotLocked() int64 {
	s.snapshots++
	return s.snapshots
}

// putSnapshotLocked puts the fold's snapshot n, written to tmp, in the data
// file's place and leaves in the journal only the lines written since its
// copy was taken. Between the two the journal still holds every line,
// which replay skips where the snapshot holds them.
func (s *Server) putSnapshotLocked(tmp string, n int64, kept [][]byte) error {
	if err := replaceWith(tmp, s.dataFile); err != nil {
		return err
	}
	s.savedSnapshot = n
	journal, err := writeBeside(journalPath(s.dataFile), bytes.Join(kept, nil))
	if err == nil {
		err = replaceWith(journal, journalPath(s.dataFile))
	}
	if err != nil {
		return err
	}
	if s.journal != nil {
		s.journal.Close() // the old file's; the next change opens the new one
		s.journal = nil
	}
	s.journalLines = len(kept)
	return nil
}

// journalLocked appends c to the journal and syncs it.
func (s *Server) journalLocked(c change) error {
	line, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if s.journal == nil {
		if s.journal, err = os.OpenFile(journalPath(s.dataFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); err != nil {
			return err
		}
	}
	end, err := s.journal.Seek(0, io.SeekEnd)
	if err == nil {
		if _, err = s.journal.Write(append(line, '\n')); err == nil {
			err = s.journal.Sync()
		}
	}
	if err != nil {
		// No part of a line for the next one to follow; the next change
		// opens the file again, which may have been put right meanwhile.
		_ = s.journal.Truncate(end)
		_ = s.journal.Close()
		s.journal = nil
		return err
	}
	s.journalLines++
	if s.folding {
		s.linesSinceFold = append(s.linesSinceFold, append(line, '\n'))
	}
	return nil
}

// snapshotLocked writes the whole store and empties the journal, whose
// changes the snapshot now holds. Called with s.mu held.
func (s *Server) snapshotLocked() error {
	if s.dataFile == "" {
		return nil
	}
	n := s.beginSnapshotLocked()
	if err := saveStore(s.dataFile, s.st); err != nil {
		return err
	}
	s.savedSnapshot, s.linesSinceFold = n, nil
	if s.journal != nil {
		s.journal.Close()
		s.journal = nil
	}
	s.journalLines = 0
	if err := os.Remove(journalPath(s.dataFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Close waits for the writes and the fold under way, then folds the
// journal into the data file, so that a stopped emulator leaves one file.
// The server must not be given requests after it.
func (s *Server) Close() error {
	s.writes.Wait()
	s.folds.Wait()
	s.mu.Lock()
	var err error
	if s.journal != nil || s.journalLines > 0 {
		err = s.snapshotLocked()
	}
	s.mu.Unlock()
	s.folds.Wait() // one a visit began meanwhile: older than Close's, it only removes its file
	return err
}
