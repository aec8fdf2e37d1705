package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flurryid/flurry/internal/hostid"
	"github.com/flurryid/flurry/internal/lockedfile"
)

// A Journal keeps, on the holder's own disk, the lease a Session holds and a mark
// at or above every tick its generator may issue in. The session writes the mark
// ahead of the generator, as it writes the store's, but locally: a write costs an
// fsync, not a round trip, and goes on while the store is unreachable.
//
// A process that starts on the journal of one that crashed uses it twice. It
// takes over the crashed run's lease, whose token the journal holds, instead of
// waiting for it to expire (Store.Takeover retires the token, so of all the
// processes started on copies of one journal, at most one gets the lease). And it
// starts above the journal's mark rather than above the store's, which is up to the
// outage budget ahead: what the crashed run really issued is below the journal's
// mark. It trusts that mark only when the journal is its own: not Copied, and not
// behind the store's epoch (a restored backup); otherwise it starts above the
// store's mark. Without a journal a restarted process takes another free value,
// and the crashed run's value stays held until its TTL ends.
//
// One journal belongs to one holder at a time: two live processes on one journal
// would each take the other's IDs for their own. FileJournal's lock enforces that.
type Journal interface {
	// Load returns the entry saved last, or the zero JournalEntry when none was.
	// It sets the entry's Copied when the entry may not be this journal's own: an
	// implementation that cannot tell sets it always.
	Load(ctx context.Context) (JournalEntry, error)
	// Save replaces the entry. When it returns nil the entry survives a crash of
	// the process and of the machine.
	Save(ctx context.Context, e JournalEntry) error
}

// JournalEntry is what a Journal keeps.
type JournalEntry struct {
	// Scope and Value name the node value held, or last held.
	Scope string `json:"scope"`
	Value int64  `json:"value"`
	// Token is the token of the live lease; empty once the session released it.
	Token string `json:"token,omitempty"`
	// Owner is the owner the lease was acquired for, for people.
	Owner string `json:"owner,omitempty"`
	// Mark is in Unix milliseconds: the holder's generator issued, and may still
	// issue, in no tick that starts after it. After a release it is the release's
	// mark, what the generator really issued.
	Mark int64 `json:"mark"`
	// Epoch is the epoch (Lease.Epoch) of the store write the session makes next
	// under Token: it saves the entry before each write, so after a crash the
	// store's record is at Epoch, or at Epoch-1 when the write did not reach it. A
	// store further ahead means this entry is behind the store: restored from a
	// backup or a reverted snapshot, or copied from an original that ran on.
	Epoch int64 `json:"epoch,omitempty"`
	// Origin names where the entry was saved: the host's boot and the journal
	// file's device and inode (package internal/hostid). A Journal fills it in.
	Origin string `json:"origin,omitempty"`
	// Copied is set by Load when the entry was saved somewhere else than where it
	// is read now: the file was copied or restored (another inode), its disk was
	// cloned into another machine, or the host rebooted (another boot id, which a
	// clone of a virtual machine cannot be told apart from). An entry without an
	// Origin, from an older flurry, counts as copied. A session does not trust a
	// copied entry's mark: a copy, and its original, may both be running.
	Copied bool `json:"-"`
}

// ErrJournalInUse is returned by OpenJournal when another open journal holds the
// file, in this process or another.
var ErrJournalInUse = errors.New("lease: the journal is in use by another process")

// FileJournal is a Journal in one file, locked for as long as it is open.
type FileJournal struct {
	path   string
	unlock func()
}

// OpenJournal opens the journal in file path, creating its directory (mode 0700)
// if needed, and locks it (path + ".lock", an OS file lock the kernel releases when
// the process dies) until Close. It fails with ErrJournalInUse while another process,
// or another open FileJournal of this one, has it. It works on Unix systems; do not
// put the file on a network file system, whose locks are not reliable.
func OpenJournal(path string) (*FileJournal, error) {
	if err := lockedfile.MakeDir("lease: journal", filepath.Dir(path)); err != nil {
		return nil, err
	}
	unlock, held, err := lockedfile.TryLock(path + ".lock")
	if err != nil {
		return nil, fmt.Errorf("lease: journal %s: %w", path, err)
	}
	if held {
		return nil, fmt.Errorf("%w: %s is locked: two processes must not share a journal (or a data directory): give each its own", ErrJournalInUse, path)
	}
	return &FileJournal{path: path, unlock: unlock}, nil
}

// Path returns the journal's file.
func (j *FileJournal) Path() string { return j.path }

// Load is Journal.Load. A file that is not a journal entry is an error that says
// which file: delete it to start without resuming (IDs stay unique; a restart may
// then wait for the crashed run's lease to expire, or take another value).
func (j *FileJournal) Load(context.Context) (JournalEntry, error) {
	b, err := os.ReadFile(j.path)
	if errors.Is(err, os.ErrNotExist) {
		return JournalEntry{}, nil
	}
	if err != nil {
		return JournalEntry{}, fmt.Errorf("lease: journal %s: %w", j.path, err)
	}
	var e JournalEntry
	if err := json.Unmarshal(b, &e); err != nil || e.Scope == "" || e.Mark < 0 || e.Value < 0 {
		return JournalEntry{}, fmt.Errorf("lease: journal %s is damaged (%d bytes): delete it to start without resuming the lease it held (IDs stay unique)", j.path, len(b))
	}
	e.Copied = e.Origin == "" || e.Origin != hostid.Origin(j.path)
	return e, nil
}

// Save is Journal.Save: a temporary file, fsync'd and renamed over the journal,
// and the directory fsync'd. It sets e.Origin to where the file lives: the
// temporary file's inode, which the rename keeps.
func (j *FileJournal) Save(_ context.Context, e JournalEntry) error {
	err := lockedfile.WriteAtomicWith(j.path, 0o600, func(tmp string) ([]byte, error) {
		e.Origin = hostid.Origin(tmp)
		return json.Marshal(e)
	})
	if err != nil {
		return fmt.Errorf("lease: journal %s: %w", j.path, err)
	}
	return nil
}

// Close releases the journal's lock. The file stays for the next process.
func (j *FileJournal) Close() error {
	if j.unlock != nil {
		j.unlock()
		j.unlock = nil
	}
	return nil
}
