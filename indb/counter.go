package indb

import (
	"github.com/flurryid/flurry/internal/bitcodec"
)

// pgCounter is how PostgreSQL's counter sequence (<function>_ctr) encodes a slot:
// the tick at bit tickShift, the sequence value at bit seqShift, and between them
// guard bits that are zero in every slot a call may keep. nextval adds 1 << seqShift,
// so the slots of a tick are counted up to its last sequence value and then into
// the tick's guard zone, never into the next tick: only a move (a setval under an
// advisory lock, to the first slot of a later tick) reaches another tick. A slot
// in the guard zone tells its caller that the tick's values ran out.
//
// Why a zone, not a carry into the next tick: a move sets the counter to the start
// of a tick, and a carry by nextval could reach the same tick while the move is
// under way (the slots of that tick would be handed out twice). With a zone, the
// counting that can happen during a move is bounded — every call that takes a slot
// in the zone goes to the move's lock, at most two slots per session — and a zone
// wider than that can never be crossed, so moves and counting never meet in a tick.
//
// When the layout has node bits between the sequence and the time field, the
// counter is the ID with its node fields zero (idSpace) and the function composes
// an ID with one OR; otherwise it is tick << (seqBits + guard) | seq, and the
// function shifts the two parts into place.
type pgCounter struct {
	tickShift, seqShift, guard uint
	idSpace                    bool
	// zone is the number of slots of a tick's guard zone.
	zone int64
}

// minZone is a guard zone that no server can cross: PostgreSQL has at most 2^18-1
// backends (MAX_BACKENDS), each of which takes at most two slots in a zone before
// it waits for the move's lock. A smaller zone is checked against the server's
// limits at install and at every move.
const minZone = 1 << 19

// newPGCounter picks the counter's encoding for a layout: the ID itself when its
// node bits between the sequence and the time field make a zone of minZone slots,
// else the widest guard that fits 63 bits beside the time and sequence fields.
// ok is false when no guard fits (the time and sequence fields take 63 bits).
func newPGCounter(c *bitcodec.Codec) (pgCounter, bool) {
	// guard + SeqBits is below 63 in both encodings: no overflow.
	zone := func(guard uint) int64 { return (int64(1)<<guard - 1) << c.SeqBits }
	var id pgCounter
	if c.SeqShift+c.SeqBits < c.TimeShift {
		g := c.TimeShift - c.SeqShift - c.SeqBits
		id = pgCounter{tickShift: c.TimeShift, seqShift: c.SeqShift, guard: g, idSpace: true, zone: zone(g)}
		if id.zone >= minZone {
			return id, true
		}
	}
	var sep pgCounter
	if c.TimeBits+c.SeqBits < 63 {
		g := 63 - c.TimeBits - c.SeqBits
		sep = pgCounter{tickShift: c.SeqBits + g, seqShift: 0, guard: g, zone: zone(g)}
	}
	if id.zone > sep.zone {
		return id, true
	}
	return sep, sep.zone > 0
}

// start is the counter value of a tick's first slot.
func (k pgCounter) start(tick int64) int64 { return tick << k.tickShift }

// slot turns a counter value into the slot tick << seqBits | seq that it stands
// for; a value in a guard zone stands for its tick's last slot (every value of the
// tick may have been issued).
func (k pgCounter) slot(c *bitcodec.Codec, v int64) int64 {
	if v < 0 {
		return v
	}
	tick := v >> k.tickShift
	seq := v >> k.seqShift & (int64(1)<<(c.SeqBits+k.guard) - 1)
	if seq > c.MaxSequence() {
		seq = c.MaxSequence()
	}
	return tick<<c.SeqBits | seq
}
