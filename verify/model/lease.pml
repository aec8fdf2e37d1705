/*
 * lease.pml: flurry's node-value lease protocol as a Promela model for SPIN.
 * docs/correctness.md explains it; model_test.go runs it.
 *
 * One node value, one store, N holder slots. A slot is a data directory: its
 * journal (lease/journal.go) survives the process. Each process may crash at any
 * moment and a new process comes up on the same slot (RESTARTS times in all), whose
 * clock may be OFF behind real time; it resumes the journal's lease when the journal
 * names one. The network delays every request and reply without bound, may lose a
 * request before the store runs it, and may lose its reply; a caller may give up
 * waiting at any moment (the request may still run later, even after its process
 * died and the next one started). Time is discrete: `now` is real time, and the
 * store's clock. A holder's clock hc[h] advances with it but may stand still for
 * DRIFT units in all (a clock slower than the store's), and may step forward by STEP
 * once. Between a generator's reading of its clock and the ID it returns, a process
 * may pause for up to PAUSE units.
 *
 * The operator may copy slot 0's journal onto a new slot, N-1, at any step, and start
 * a process there (CLONES, at most one copy: cp -a of a data directory, a cloned VM
 * or volume), while slot 0's process runs on or after it crashed; and may save a
 * copy of slot 0's journal at any step and restore it in place once, after slot 0's
 * process ended (REVERT: a backup, a reverted snapshot), the next process's clock
 * up to ROFF behind. A copy is seen as copied (JournalEntry.Copied: another file's
 * Origin) until its slot's own process saves it; a journal restored in place is not
 * (the worst case: same inode, same boot), and only the epoch tells it is behind.
 * The store's record counts its writes (the epoch: Acquire, Renew, Takeover); every
 * store write follows a journal save naming its epoch.
 *
 * The model follows the session in lease/ (acquire.go, grant.go, renew.go,
 * journalwrite.go, resume.go, close.go: tryAcquire, tryResume, renew, Close,
 * writeJournal), the stores' Acquire/Renew/Release/Takeover (one atomic
 * step each, expiry judged by the store's clock; Takeover retires the token it is
 * given and answers the mark before it raised it), a journal whose Save is atomic
 * and durable when it returns, and the
 * checks of snowflake/generator.go's reserve (Above < tick <= Through, clock < Until).
 * A tick is a reading of the holder's clock; one ID per holder and tick stands for
 * all the IDs of that tick (sequence numbers never collide across node values or
 * ticks, so only a shared tick can).
 *
 * Invariants, checked on every ID as it is returned:
 *   I1  no two runs of the value issue in the same tick (no duplicate ID); a run is
 *       an acquisition, or a resumption of it by a later process of its slot;
 *   I2  every ID's tick is at or below the store's mark when the ID is returned
 *       (the window was reserved before it was issued into);
 *   I3  runs are ordered: every tick of a later run is above every tick of an
 *       earlier one, whenever each was issued (runs in the order of their tokens,
 *       and of the processes for one token);
 *   I4  exclusivity: a holder issues only while the store holds its lease live
 *       (a call already past the fence when Close revoked is exempt; I1-I3 cover
 *       it through the release mark; so is a holder whose token a Takeover retired,
 *       the original of a copy, which issues on until its next renewal fails or its
 *       fence, never above the reservation the copy starts above: I1-I3 cover it).
 * I1 and I3 are checked against one witness ID that the search chooses
 * nondeterministically (w_tick, w_key), instead of a record of every ID.
 *
 * Known-bad variants, chosen with -D, each of which must produce a counterexample:
 *   BUG_REPLY          the fence is measured from the renewal's reply, not its send
 *   BUG_NORESERVE      a renewal's window is granted when it is sent, before the
 *                      store has written it
 *   BUG_NOPLUS1        a new holder issues from the mark's own tick
 *   BUG_RELEASE_ABOVE  Close releases with the mark it found, not with what it issued
 *   BUG_NOTOKEN        the store renews a live lease without comparing the token
 *   BUG_LOSTWRITE      the store loses its last write once (a failover to an
 *                      asynchronous replica)
 *   BUG_STORESTEP      the store's clock steps forward by SSTEP once
 *   BUG_RESUME_NOTOKEN a restart takes the journal's value back without the store's
 *                      proof that its lease is still the journal's: when the resume's
 *                      Renew fails it acquires the value anyway and starts above the
 *                      journal's mark
 *   BUG_PAST_BUDGET    the generator is bounded by the journal's mark only, not by
 *                      the store's reservation (verify/sim's PastBudget)
 *   BUG_JOURNAL_LATE   a renewal grants through the journal's new mark before the
 *                      journal has it (verify/sim's GrantBeforeJournal)
 *   BUG_STALE_RELEASE  a Release is sent while the journal still names its lease:
 *                      tryAcquire's abandon, and Close, which keeps the token when
 *                      its Release fails; a restart resumes the lease, then the late
 *                      Release frees it and lowers the mark (with BUG_RESUME_RENEW:
 *                      a Takeover retires the token, and the late Release fails)
 *   BUG_RESUME_RENEW   a restart resumes the journal's lease by renewing its token,
 *                      as before Takeover: two copies of one journal both resume
 *   BUG_KEEP_TOKEN     the store's Takeover is a Renew: the token is not retired
 *   BUG_TRUST_COPY     a copied journal's mark is trusted when its epoch is not
 *                      behind (Copied ignored)
 *   BUG_NOEPOCH        a journal's mark is trusted when it was not copied, however
 *                      far the store's epoch is ahead of it
 *   BUG_EPOCH_SLACK    a journal one store write behind is trusted
 *   REVERT_ANY         a copy is restored in place also when the store's epoch is
 *                      still the copy's and the slot issued above its mark: the case
 *                      the epoch cannot see (docs/correctness.md)
 * and failed assumptions by parameters: MARGIN too small or DRIFT too large for the
 * other, PAUSE too long (with NO_EXCL, which drops I4: I1-I3 hold under any pause).
 * NOJOURNAL models a session without a Journal (Options.Journal nil).
 */

#ifndef N
#define N 2          /* holder slots */
#endif
#ifndef TTL
#define TTL 6        /* the lease's time to live (69 s by default) */
#endif
#ifndef MARGIN
#define MARGIN 2     /* the fence's margin, TTL/10 + 50 ms */
#endif
#ifndef EVERY
#define EVERY 1      /* the renew loop's interval, min(TTL/3, Window) (2 s) */
#endif
#ifndef RES
#define RES 4        /* how far ahead a store write reserves: Budget + EVERY; at most
                        TTL - MARGIN, which the derived TTL makes it (about) */
#endif
#ifndef JRES
#define JRES (2 * EVERY) /* how far ahead a journal write reaches (jahead) */
#endif
#ifndef DRIFT
#define DRIFT 1      /* units a holder's clock may fall behind the store's, per process */
#endif
#ifndef PAUSE
#define PAUSE 1      /* longest pause between a generator's clock reading and its ID */
#endif
#ifndef OFF
#define OFF 1        /* a new process's clock may be this far behind real time */
#endif
#ifndef STEP
#define STEP 0       /* a forward step of a holder's clock (0: none) */
#endif
#ifndef SSTEP
#define SSTEP 2      /* BUG_STORESTEP: a forward step of the store's clock */
#endif
#ifndef HORIZON
#define HORIZON 8    /* how long the model runs, in units of real time */
#endif
#ifndef MAXACQ
#define MAXACQ 2     /* acquisitions the store grants in one run */
#endif
#ifndef RESTARTS
#define RESTARTS 1   /* new processes, in all */
#endif

#ifndef CLONES
#define CLONES 0     /* copies of slot 0's journal onto slot N-1, a new data directory */
#endif
#ifndef ROFF
#define ROFF OFF     /* the clock of a process on a reverted journal may be this far behind */
#endif
#if CLONES > 0 || defined(REVERT)
#define EPOCH        /* the store's and the journal's epochs matter */
#endif

#define BASE 4       /* real time starts here, so that every clock stays positive */
#define END  (BASE + HORIZON)

/* session phases (lease/session.go) */
#define IDLE   0     /* the acquire loop: tryResume or Store.Acquire next */
#define ACQW   1     /* waiting for Acquire */
#define REN0W  2     /* tryAcquire: waiting for the first Renew, which reserves */
#define REL0   3     /* tryAcquire: the first Renew failed; abandon: Release(l, l.Mark) next */
#define HELD   4     /* granted; the renew loop runs */
#define RENW   5     /* waiting for a renewal */
#define DEAD   6     /* crashed, or closed */
#define RESW   7     /* tryResume: waiting for the Renew with the journal's token */
#define RESA   8     /* BUG_RESUME_NOTOKEN: waiting for the Acquire that takes the value back */
#define CLOSEW 9     /* BUG_STALE_RELEASE: Close waits for its Release, then writes the journal */
#define RESR   10    /* tryResume: waiting for the Renew above the store's mark */

/* requests and replies */
#define NONE 0
#define ACQ  1
#define REN  2
#define REL  3
#define TKO  4       /* Takeover: the journal's lease replaced by a new token, at once */
#define OK   1
#define FAIL 2

#define max(a, b) ((a) > (b) -> (a) : (b))
#define min(a, b) ((a) < (b) -> (a) : (b))

byte now = BASE;            /* real time, and the store's clock (plus sstep) */

/* the store's record of the value */
byte s_tok;                 /* token of the live lease, 0 when free; tokens are 1, 2, ... */
byte s_exp;                 /* its expiry, by the store's clock */
byte s_mark;                /* the high-water mark */
byte acqs;                  /* acquisitions so far */
byte toks;                  /* tokens handed out (Acquire, Takeover): the next is toks + 1 */
byte retired;               /* bit t: token t was retired by a Takeover */
byte restarts;              /* new processes so far */
byte procs;                 /* processes started after the first ones (a run's key) */
byte tkmark;                /* scratch: the mark a Takeover found, before it raised it */
byte s_ep;                  /* the record's epoch: one more on every write but Release
                               (without EPOCH it stays 0: nothing compares it) */
#ifdef EPOCH
#define EPINC s_ep++
#else
#define EPINC skip
#endif
#if CLONES > 0
byte clones;                /* copies made so far */
#endif
#ifdef REVERT
byte sv_st;                    /* the saved copy of slot 0's journal: 0 none, 1 saved, 2 restored */
byte sv_tok, sv_mark, sv_ep;
bit  sv_cp;
bit  sv_hi;                 /* slot 0 issued above sv_mark since the copy was saved */
bit  rvd;                   /* slot 0's journal was restored; its next process may be ROFF behind */
#endif
byte res;                   /* scratch: the outcome of the store operation being run */
#ifdef BUG_LOSTWRITE
byte p_tok, p_exp, p_mark;  /* the replica: the record before the last write */
bit failed;
#endif
#ifdef BUG_STORESTEP
byte sstep;
#define SNOW (now + sstep)
#else
#define SNOW now
#endif

/* per slot: the journal, which survives the process */
byte j_tok[N];              /* token of the lease held; 0 after a release, or none yet */
byte j_mark[N];             /* the local mark: the slot's processes issued no tick above it */
byte gen[N];                /* the process's number: procs when it started */
bit  born[N];               /* the slot exists (CLONES: slot N-1 from the copy on) */
bit  j_cp[N];               /* its Origin is another file's: copied (or a clone's), until
                               the slot's own process writes it */
byte j_ep[N];               /* the epoch of the store write its process was about to make */

/* per holder process: the session */
byte ph[N];                 /* phase */
byte tok[N];                /* token of the lease held, being reserved or resumed */
byte lmark[N];              /* l.Mark: the store's mark when the value was claimed */
byte above[N];              /* s.above: the mark this holder starts above */
byte mark[N];               /* s.mark: the reservation the store confirmed */
byte pmark[N];              /* the mark of the Renew in flight (CLOSEW: the release's) */
byte psent[N];              /* the holder's clock when it was sent */
byte jload[N];              /* the journal's mark when the process started: what the
                               slot's earlier processes may have issued through */
byte rsm[N];                /* s.resume: 1 while the journal's lease may be resumed
                               (2: BUG_RESUME_NOTOKEN took the value back) */
#ifdef BUG_JOURNAL_LATE
byte jw[N];                 /* a journal mark granted through but not written yet */
#endif
bit  cpload[N];             /* the journal was copied when the process loaded it */
byte jeload[N];             /* the journal's epoch when the process loaded it (s.resume's) */
byte rtok[N], rmark[N];     /* s.resume: the lease to take over, and the mark to trust */
byte sep[N];                /* s.l.Epoch: the epoch of the lease held, as last written */
byte rp_ep[N];              /* a reply's epoch */
/* per holder process: its request in flight, and the reply */
byte rq[N];
byte rq_tok[N], rq_mark[N];
bit  orphan[N];             /* no caller waits for it: its reply is dropped */
byte rp[N];
byte rp_tok[N], rp_mark[N]; /* Acquire's token and mark */
/* per slot: a request of a dead process, still in the network after the restart */
byte gq[N];
byte gq_tok[N], gq_mark[N];
/* per holder process: the generator */
bit  gr[N];                 /* granted, not revoked */
byte g_above[N], g_through[N], g_until[N];
byte g_key[N];              /* the run: token * 4 + the process's gen */
byte last[N];               /* tick of the last ID returned, while the clock is in it */
byte pend[N];               /* tick of an ID past the checks, not returned yet (0: none) */
byte pdl[N];                /* real time by which it is returned */
byte pkey[N];               /* the run it belongs to */
bit  pex[N];                /* it was past the fence when Close revoked */
/* per holder process: the clock */
byte hc[N];
byte drift[N];              /* units it stood still */
bit  stepped[N];

/* the witness ID for I1 and I3 */
byte w_tick, w_key;

#define KEY(h) (tok[h] * 4 + gen[h])

/* ---- the store: each operation is one atomic step, its outcome in res ---- */

inline snapshot() {
#ifdef BUG_LOSTWRITE
	p_tok = s_tok; p_exp = s_exp; p_mark = s_mark;
#endif
	skip
}

/* Acquire: a value no live lease holds; the expiry by the store's clock */
inline store_acquire() {
	if
	:: (s_tok == 0 || SNOW >= s_exp) && acqs < MAXACQ ->
		snapshot();
		acqs++; toks++; s_tok = toks; s_exp = SNOW + TTL; EPINC; res = OK
	:: else -> res = FAIL   /* ErrNoFreeValue */
	fi
}

/* Renew: the live lease of this token only; raises the mark, never lowers it */
inline store_renew(t, m) {
	if
#ifdef BUG_NOTOKEN
	:: s_tok != 0 && SNOW < s_exp ->
#else
	:: s_tok == t && SNOW < s_exp ->
#endif
		snapshot();
		s_exp = SNOW + TTL; s_mark = max(s_mark, m); EPINC; res = OK
	:: else -> res = FAIL   /* ErrLost */
	fi
}

/* Takeover: the live lease of this token only, replaced by a lease of a new token
 * (the old one retired: its Renew and Release fail from now on); raises the mark
 * and answers the mark as it was before (tkmark) */
inline store_takeover(t, m) {
	if
	:: s_tok == t && SNOW < s_exp ->
		snapshot();
#ifdef BUG_KEEP_TOKEN
		/* a Renew: the token stays, its other holders renew on */
		s_exp = SNOW + TTL; tkmark = s_mark; s_mark = max(s_mark, m); EPINC; res = OK
#else
		retired = retired | (1 << t);
		toks++; s_tok = toks; s_exp = SNOW + TTL; tkmark = s_mark; s_mark = max(s_mark, m); EPINC; res = OK
#endif
	:: else -> res = FAIL   /* ErrLost */
	fi
}

/* Release: the live lease of this token only; sets the mark, even lower */
inline store_release(t, m) {
	if
	:: s_tok == t && SNOW < s_exp ->
		snapshot();
		s_tok = 0; s_exp = 0; s_mark = m; res = OK
	:: else -> res = FAIL   /* ErrLost */
	fi
}

inline store_run(kind, t, m) {
	if
	:: kind == ACQ -> store_acquire()
	:: kind == REN -> store_renew(t, m)
	:: kind == REL -> store_release(t, m)
	:: kind == TKO -> store_takeover(t, m)
	fi
}

inline send(h, kind, t, m) {
	rq[h] = kind; rq_tok[h] = t; rq_mark[h] = m
}

/* ---- the journal: one atomic, durable Save per step ---- */

/* the mark of a journal write: reservation(jmark, above, now, jahead) */
#ifdef EPOCH
#define JEPOCH(h, e) j_ep[h] = e
#define SEP(h, e) sep[h] = e
#else
#define JEPOCH(h, e) skip
#define SEP(h, e) skip
#endif
#ifdef NOJOURNAL
#define JNEXT(h, a) 0
inline jwrite(h, a) { skip }
inline jtoken(h, t) { skip }
inline jsave(h, a) { skip }
#define THROUGH(m, h) (m)
#else
#define JNEXT(h, a) max(j_mark[h], max(a, hc[h]) + JRES)
inline jwrite(h, a) { j_mark[h] = JNEXT(h, a) }
inline jtoken(h, t) { j_tok[h] = t }
/* a renewal's save: mark, token, the epoch of the write that follows, and the
 * slot's own Origin */
inline jsave(h, a) { jwrite(h, a); jtoken(h, tok[h]); JEPOCH(h, sep[h] + 1); j_cp[h] = 0 }
/* what the generator may issue through (Session.through) */
#ifdef BUG_PAST_BUDGET
#define THROUGH(m, h) j_mark[h]
#else
#define THROUGH(m, h) min(m, j_mark[h])
#endif
#endif

/* a resumption is fast, above the journal's mark, when the journal was not copied
 * and the store was not written after the write it names: its epoch before the
 * Takeover (the reply's, less one) is at most the journal's */
#ifdef BUG_TRUST_COPY
#define CPOK(h) 1
#else
#define CPOK(h) (!cpload[h])
#endif
#if defined(EPOCH) && defined(BUG_EPOCH_SLACK)
#define EPOK(h) (rp_ep[h] <= jeload[h] + 2)
#elif defined(EPOCH) && !defined(BUG_NOEPOCH)
#define EPOK(h) (rp_ep[h] <= jeload[h] + 1)
#else
#define EPOK(h) 1
#endif
#define TRUSTED(h) (CPOK(h) && EPOK(h))
#ifdef EPOCH
#define RPEP0(h) rp_ep[h] = 0
#define REPOCH(h) jeload[h] = sep[h]
#define RPEP(h) rp_ep[h] = s_ep
#else
#define RPEP0(h) skip
#define REPOCH(h) skip
#define RPEP(h) skip
#endif

/* a fenced grant: from the renewal's send (or, BUG_REPLY, from its reply) */
inline grant(h) {
	g_above[h] = above[h]; g_through[h] = THROUGH(pmark[h], h);
#ifdef BUG_REPLY
	g_until[h] = hc[h] + TTL - MARGIN;
#else
	g_until[h] = psent[h] + TTL - MARGIN;
#endif
	g_key[h] = KEY(h); gr[h] = 1;
	printf("t=%d: H%d granted: run %d, above %d, through %d, until %d (journal %d)\n", now, h, g_key[h], g_above[h], g_through[h], g_until[h], j_mark[h])
}

inline revoke(h) {
	gr[h] = 0; g_above[h] = 0; g_through[h] = 0; g_until[h] = 0; g_key[h] = 0
}

/* the session is gone (crash, or Close returned); a request in flight stays */
inline end_session(h) {
	ph[h] = DEAD; revoke(h);
	tok[h] = 0; lmark[h] = 0; above[h] = 0; mark[h] = 0; pmark[h] = 0; psent[h] = 0; rsm[h] = 0; jload[h] = 0;
	cpload[h] = 0; rtok[h] = 0; rmark[h] = 0;
#ifdef EPOCH
	jeload[h] = 0; sep[h] = 0; rp_ep[h] = 0;
#endif
#ifdef BUG_JOURNAL_LATE
	jw[h] = 0;
#endif
	rp[h] = NONE; rp_tok[h] = 0; rp_mark[h] = 0;
	hc[h] = 0; drift[h] = 0; stepped[h] = 0;
	if
	:: rq[h] != NONE -> orphan[h] = 1
	:: else -> skip
	fi
}

/* an ID is returned: check it */
inline issue(h) {
	printf("t=%d: H%d returns an ID in tick %d (run %d); store: token %d, expiry %d, mark %d\n", now, h, pend[h], pkey[h], s_tok, s_exp, s_mark);
#ifndef NO_EXCL
	/* I4 */
	assert(pex[h] || (s_tok == pkey[h] / 4 && SNOW < s_exp) || (retired & (1 << (pkey[h] / 4))));
#endif
	/* I2 */
	assert(pend[h] <= s_mark);
	if
	:: w_key == 0 ->
		if
		:: w_tick = pend[h]; w_key = pkey[h]   /* make it the witness */
		:: skip
		fi
	:: else ->
		/* I1 */
		assert(pend[h] != w_tick || pkey[h] == w_key);
		/* I3 */
		assert((pkey[h] <= w_key || pend[h] > w_tick) && (pkey[h] >= w_key || pend[h] < w_tick))
	fi;
	if
	:: ph[h] != DEAD -> last[h] = pend[h]
	:: else -> skip
	fi;
	pend[h] = 0; pdl[h] = 0; pkey[h] = 0; pex[h] = 0
}

proctype Holder(byte h) {
	byte d;
end:
	do
	/* ---- the session (lease/session.go) ---- */
	/* tryResume (lease/resume.go): take the journal's lease over, retiring its
	 * token; then the journal names the new lease, before any grant */
	:: atomic { ph[h] == IDLE && rq[h] == NONE && rsm[h] && psent[h] == 0 ->
		tok[h] = rtok[h]; above[h] = rmark[h];
		psent[h] = hc[h]; pmark[h] = max(above[h], hc[h]) + RES;
#ifdef BUG_RESUME_RENEW
		printf("t=%d: H%d (clock %d) resumes: token %d mark %d copied %d; Renew(token %d, mark %d)\n", now, h, hc[h], rtok[h], rmark[h], cpload[h], tok[h], pmark[h]);
		send(h, REN, tok[h], pmark[h]); ph[h] = RESW }
#else
		printf("t=%d: H%d (clock %d) resumes: token %d mark %d epoch %d copied %d; Takeover(token %d, mark %d)\n", now, h, hc[h], rtok[h], rmark[h], jeload[h], cpload[h], tok[h], pmark[h]);
		send(h, TKO, tok[h], pmark[h]); ph[h] = RESW }
#endif
	:: atomic { ph[h] == RESW && rp[h] != NONE ->
		if
#ifdef BUG_RESUME_RENEW
		:: rp[h] == OK ->
			/* today's resume: the Renew proves the journal's token is live */
			SEP(h, rp_ep[h]); jsave(h, above[h]); mark[h] = pmark[h]; grant(h); rsm[h] = 0; ph[h] = HELD
#else
		:: rp[h] == OK && TRUSTED(h) ->
			/* resumed: above the journal's mark, not the store's */
			tok[h] = rp_tok[h]; SEP(h, rp_ep[h]); jsave(h, above[h]);
			mark[h] = pmark[h]; grant(h); rsm[h] = 0; ph[h] = HELD
		:: rp[h] == OK && !TRUSTED(h) && rp_mark[h] <= above[h] ->
			tok[h] = rp_tok[h]; SEP(h, rp_ep[h]); jsave(h, above[h]);
			mark[h] = pmark[h]; grant(h); rsm[h] = 0; ph[h] = HELD
		:: rp[h] == OK && !TRUSTED(h) && rp_mark[h] > above[h] ->
			/* a copied journal, or one behind the store: above the store's mark as
			 * the Takeover found it, reserved before the grant (from the same send) */
			tok[h] = rp_tok[h]; SEP(h, rp_ep[h]); above[h] = rp_mark[h];
			pmark[h] = max(above[h], psent[h]) + RES;
			jsave(h, above[h]);
			printf("t=%d: H%d took over a journal copied (%d) or behind the store (store epoch %d, journal %d): token %d above %d; Renew(token %d, mark %d)\n", now, h, cpload[h], rp_ep[h] - 1, jeload[h], tok[h], above[h], tok[h], pmark[h]);
			send(h, REN, tok[h], pmark[h]); ph[h] = RESR
#endif
#ifdef BUG_RESUME_NOTOKEN
		:: rp[h] == FAIL && rsm[h] == 1 ->
			/* take the value back anyway, keeping above, psent and pmark */
			rsm[h] = 2; send(h, ACQ, 0, 0); ph[h] = RESA
		:: rp[h] == FAIL && rsm[h] == 2 ->
			rsm[h] = 0; tok[h] = 0; above[h] = 0; psent[h] = 0; pmark[h] = 0; ph[h] = IDLE
#else
		:: rp[h] == FAIL ->
			/* ErrLost: the lease expired or was taken; acquire as usual */
			rsm[h] = 0; tok[h] = 0; above[h] = 0; psent[h] = 0; pmark[h] = 0; ph[h] = IDLE
#endif
		fi;
		rp[h] = NONE; rp_tok[h] = 0; rp_mark[h] = 0; RPEP0(h);
		if
		:: ph[h] != RESA && ph[h] != RESR -> pmark[h] = 0
		:: else -> skip
		fi }
	/* the reservation above the store's mark: granted, or left to the next attempt,
	 * which takes the new lease over (trusting it no more than this one did) */
	:: atomic { ph[h] == RESR && rp[h] != NONE ->
		if
		:: rp[h] == OK -> SEP(h, rp_ep[h]); mark[h] = pmark[h]; grant(h); rsm[h] = 0; ph[h] = HELD
		:: else -> rtok[h] = tok[h]; rmark[h] = above[h]; REPOCH(h); ph[h] = IDLE; tok[h] = 0; above[h] = 0
		fi;
		rp[h] = NONE; rp_tok[h] = 0; RPEP0(h); pmark[h] = 0 }
#ifdef BUG_RESUME_NOTOKEN
	:: atomic { ph[h] == RESA && rp[h] != NONE ->
		if
		:: rp[h] == OK ->
			printf("t=%d: H%d takes the value back with token %d, above %d\n", now, h, rp_tok[h], above[h]);
			tok[h] = rp_tok[h]; SEP(h, rp_ep[h]); send(h, REN, tok[h], pmark[h]); ph[h] = RESW
		:: else -> rsm[h] = 0; tok[h] = 0; above[h] = 0; psent[h] = 0; pmark[h] = 0; ph[h] = IDLE
		fi;
		rp[h] = NONE; rp_tok[h] = 0; rp_mark[h] = 0; RPEP0(h) }
#endif
	/* tryAcquire: claim */
	:: atomic { ph[h] == IDLE && rq[h] == NONE && !rsm[h] -> send(h, ACQ, 0, 0); ph[h] = ACQW }
	:: atomic { ph[h] == ACQW && rp[h] != NONE ->
		if
		:: rp[h] == OK ->
			/* above the store's mark and the journal's; the journal names the lease
			 * and reaches JRES ahead before the Renew that reserves is sent */
			tok[h] = rp_tok[h]; SEP(h, rp_ep[h]); lmark[h] = rp_mark[h]; above[h] = max(rp_mark[h], jload[h]);
			psent[h] = hc[h]; pmark[h] = max(above[h], hc[h]) + RES;
			jsave(h, above[h]);
			printf("t=%d: H%d (clock %d) acquired token %d, store mark %d; journal token %d mark %d; Renew(token %d, mark %d)\n", now, h, hc[h], tok[h], rp_mark[h], j_tok[h], j_mark[h], tok[h], pmark[h]);
			send(h, REN, tok[h], pmark[h]); ph[h] = REN0W
		:: else -> ph[h] = IDLE
		fi;
		rp[h] = NONE; rp_tok[h] = 0; rp_mark[h] = 0; RPEP0(h) }
	:: atomic { ph[h] == REN0W && rp[h] != NONE ->
		if
		:: rp[h] == OK -> SEP(h, rp_ep[h]); mark[h] = pmark[h]; grant(h); lmark[h] = 0; ph[h] = HELD
		:: else -> ph[h] = REL0
		fi;
		rp[h] = NONE; rp_tok[h] = 0; RPEP0(h); pmark[h] = 0 }
	/* tryAcquire's abandon, Release(l, l.Mark), after a failed first Renew; its
	 * outcome does not matter to the caller. The journal stops naming the lease
	 * first: a Release under a token the journal names may run after a restart
	 * resumed it. */
	:: atomic { ph[h] == REL0 && rq[h] == NONE ->
#ifndef BUG_STALE_RELEASE
		if
		:: j_tok[h] == tok[h] -> jtoken(h, 0)
		:: else -> skip
		fi;
#endif
		printf("t=%d: H%d abandons: journal token %d; Release(token %d, mark %d)\n", now, h, j_tok[h], tok[h], lmark[h]);
		send(h, REL, tok[h], lmark[h]); orphan[h] = 1;
		tok[h] = 0; lmark[h] = 0; above[h] = 0; psent[h] = 0; ph[h] = IDLE }
	/* the renew loop, EVERY or later after the last renewal: the journal first, on
	 * its own (and the generator re-granted through it with the old fence), then
	 * the store; every renewal saves the journal, with the epoch of its write */
#ifdef BUG_JOURNAL_LATE
	:: atomic { ph[h] == HELD && rq[h] == NONE && jw[h] == 0 && hc[h] >= psent[h] + EVERY ->
		/* granted through the new mark before the write */
		jw[h] = JNEXT(h, above[h]);
		if
		:: gr[h] -> g_through[h] = min(mark[h], jw[h])
		:: else -> skip
		fi;
		printf("t=%d: H%d (clock %d) grants through %d before the journal has it (journal %d)\n", now, h, hc[h], g_through[h], j_mark[h]) }
	:: atomic { ph[h] == HELD && rq[h] == NONE && jw[h] != 0 ->
		j_mark[h] = jw[h]; jw[h] = 0; jtoken(h, tok[h]); JEPOCH(h, sep[h] + 1); j_cp[h] = 0;
#else
	:: atomic { ph[h] == HELD && rq[h] == NONE && hc[h] >= psent[h] + EVERY ->
		jsave(h, above[h]);
		if
		:: gr[h] -> g_through[h] = THROUGH(mark[h], h)
		:: else -> skip
		fi;
#endif
		psent[h] = hc[h]; pmark[h] = max(mark[h], hc[h] + RES);
#ifdef BUG_NORESERVE
		grant(h);
#endif
		printf("t=%d: H%d (clock %d) renews: journal mark %d; Renew(token %d, mark %d)\n", now, h, hc[h], j_mark[h], tok[h], pmark[h]);
		send(h, REN, tok[h], pmark[h]); ph[h] = RENW }
	:: atomic { ph[h] == RENW && rp[h] != NONE ->
		if
		:: rp[h] == OK -> SEP(h, rp_ep[h]); mark[h] = pmark[h]; grant(h); ph[h] = HELD
		:: else -> revoke(h); ph[h] = IDLE   /* ErrLost: stop, acquire again */
		fi;
		rp[h] = NONE; rp_tok[h] = 0; RPEP0(h); pmark[h] = 0 }
	/* the caller gives up: the request may still run, its reply is dropped */
	:: atomic { (ph[h] == ACQW || ph[h] == REN0W || ph[h] == RENW || ph[h] == RESW || ph[h] == RESA || ph[h] == RESR) ->
		if
		:: rq[h] != NONE -> orphan[h] = 1
		:: else -> skip
		fi;
		rp[h] = NONE; rp_tok[h] = 0; rp_mark[h] = 0; RPEP0(h);
		if
		:: ph[h] == ACQW -> ph[h] = IDLE
		:: ph[h] == REN0W -> ph[h] = REL0; pmark[h] = 0
		:: ph[h] == RENW -> ph[h] = HELD; pmark[h] = 0   /* the grant runs on to its Until */
		:: ph[h] == RESW -> ph[h] = IDLE; tok[h] = 0; above[h] = 0; pmark[h] = 0
			/* resume again once the interval has passed (canon clears psent): the
			 * store did not answer */
		:: ph[h] == RESA -> ph[h] = IDLE; rsm[h] = 0; tok[h] = 0; above[h] = 0; psent[h] = 0; pmark[h] = 0
		:: ph[h] == RESR -> rtok[h] = tok[h]; rmark[h] = above[h]; REPOCH(h); ph[h] = IDLE; tok[h] = 0; above[h] = 0; pmark[h] = 0
		fi }
	/* Close: revoke, then release with what was issued (IssuedThrough); the journal
	 * keeps that mark and no token, written before the Release is sent */
	:: atomic { ph[h] == HELD && rq[h] == NONE ->
		pex[h] = (pend[h] != 0);
#ifdef BUG_RELEASE_ABOVE
		d = above[h];
#else
		d = min(mark[h], max(max(last[h] + 1, hc[h]), above[h]));
#endif
#ifdef BUG_STALE_RELEASE
		/* the journal is written after the Release answers */
		printf("t=%d: H%d closes: Release(token %d, mark %d)\n", now, h, tok[h], d);
		send(h, REL, tok[h], d); revoke(h); pmark[h] = d; d = 0; ph[h] = CLOSEW }
	:: atomic { ph[h] == CLOSEW && rp[h] != NONE ->   /* released, or ErrLost */
		jtoken(h, 0); j_mark[h] = pmark[h]; end_session(h) }
	:: atomic { ph[h] == CLOSEW ->   /* no answer: the journal keeps the token */
		if
		:: rq[h] != NONE -> orphan[h] = 1
		:: else -> skip
		fi;
		j_mark[h] = max(pmark[h], j_mark[h]); end_session(h) }
#else
#ifndef NOJOURNAL
		jtoken(h, 0); j_mark[h] = d;
#endif
		printf("t=%d: H%d closes: journal token %d mark %d; Release(token %d, mark %d)\n", now, h, j_tok[h], j_mark[h], tok[h], d);
		send(h, REL, tok[h], d); d = 0;
		end_session(h) }
#endif
	/* a crash: the process and its generator are gone, its journal stays (a crash
	 * while the session holds nothing matters only to a restart) */
	:: atomic { (ph[h] == REN0W || ph[h] == HELD || ph[h] == RENW ||
		     ph[h] != DEAD && restarts < RESTARTS) ->
		printf("t=%d: H%d crashes; journal token %d mark %d\n", now, h, j_tok[h], j_mark[h]);
		end_session(h); last[h] = 0; pend[h] = 0; pdl[h] = 0; pkey[h] = 0; pex[h] = 0 }
	/* a new process on the slot, whose clock may be behind; the dead process's
	 * request may still be in the network */
	:: atomic { ph[h] == DEAD && born[h] && restarts < RESTARTS && gq[h] == NONE && pend[h] == 0 ->
		restarts++; procs++; gen[h] = procs; last[h] = 0;
		gq[h] = rq[h]; gq_tok[h] = rq_tok[h]; gq_mark[h] = rq_mark[h];
		rq[h] = NONE; rq_tok[h] = 0; rq_mark[h] = 0; orphan[h] = 0;
		if
		:: hc[h] = now
		:: hc[h] = now - OFF
#ifdef REVERT
		:: rvd && h == 0 && ROFF > OFF -> hc[h] = now - ROFF
#endif
		fi;
#ifdef REVERT
		if
		:: h == 0 -> rvd = 0
		:: else -> skip
		fi;
#endif
		rsm[h] = (j_tok[h] != 0); jload[h] = j_mark[h]; cpload[h] = j_cp[h]; rtok[h] = j_tok[h]; rmark[h] = j_mark[h];
#ifdef EPOCH
		jeload[h] = j_ep[h];
#endif
		printf("t=%d: H%d restarts, clock %d; the dead process's request in flight: %d\n", now, h, hc[h], gq[h]);
		ph[h] = IDLE }
#if STEP > 0
	/* the clock steps forward */
	:: atomic { ph[h] != DEAD && !stepped[h] -> hc[h] = hc[h] + STEP; stepped[h] = 1 }
#endif

	/* ---- the network and the store, for this process's request ---- */
	/* the store runs it */
	:: atomic { rq[h] != NONE ->
		store_run(rq[h], rq_tok[h], rq_mark[h]);
		printf("t=%d: the store runs H%d's request %d (token %d, mark %d): %d; store: token %d, expiry %d, mark %d\n", now, h, rq[h], rq_tok[h], rq_mark[h], res, s_tok, s_exp, s_mark);
		if
		:: !orphan[h] ->
			rp[h] = res;
			if
			:: rq[h] == ACQ && res == OK -> rp_tok[h] = s_tok; rp_mark[h] = s_mark; RPEP(h)
			:: rq[h] == TKO && res == OK -> rp_tok[h] = s_tok; rp_mark[h] = tkmark; RPEP(h)
			:: rq[h] == REN && res == OK -> rp_tok[h] = rq_tok[h]; RPEP(h)
			:: else -> skip
			fi
		:: else -> skip
		fi;
		res = 0; tkmark = 0; rq[h] = NONE; rq_tok[h] = 0; rq_mark[h] = 0; orphan[h] = 0 }
	/* it is lost (a request whose caller still waits is lost the same way: the
	 * caller gives up, then the request is lost) */
	:: atomic { rq[h] != NONE && orphan[h] -> rq[h] = NONE; rq_tok[h] = 0; rq_mark[h] = 0; orphan[h] = 0 }
	/* a dead process's request: the store runs it, or it is lost */
	:: atomic { gq[h] != NONE -> store_run(gq[h], gq_tok[h], gq_mark[h]);
		printf("t=%d: the store runs H%d's dead process's request %d (token %d, mark %d): %d; store: token %d, expiry %d, mark %d\n", now, h, gq[h], gq_tok[h], gq_mark[h], res, s_tok, s_exp, s_mark);
		res = 0; tkmark = 0; gq[h] = NONE; gq_tok[h] = 0; gq_mark[h] = 0 }
	:: atomic { gq[h] != NONE -> gq[h] = NONE; gq_tok[h] = 0; gq_mark[h] = 0 }

	/* ---- the generator (snowflake/generator.go, reserve) ---- */
	/* it reads the clock and passes the checks */
	:: atomic { gr[h] && pend[h] == 0 && hc[h] != last[h] && hc[h] < g_until[h] &&
#ifdef BUG_NOPLUS1
		hc[h] >= g_above[h] &&
#else
		hc[h] > g_above[h] &&
#endif
		hc[h] <= g_through[h] ->
		pend[h] = hc[h]; pdl[h] = now + PAUSE; pkey[h] = g_key[h];
#ifdef REVERT
		if
		:: sv_st == 1 && h == 0 && pend[h] > sv_mark -> sv_hi = 1
		:: else -> skip
		fi;
#endif
	}
	/* the ID is returned, at most PAUSE later */
	:: atomic { pend[h] != 0 -> issue(h) }
	od
}

#define URGENT(i) (pend[i] != 0 && pdl[i] <= now)
#if N == 1
#define CALM (!URGENT(0))
#elif N == 2
#define CALM (!URGENT(0) && !URGENT(1))
#else
#define CALM (!URGENT(0) && !URGENT(1) && !URGENT(2))
#endif

/* a grant the generator can no more issue under: its fence has passed, or the
 * clock is past its Through and past what a re-grant through the journal can
 * raise Through to (the store's mark) */
#ifdef BUG_PAST_BUDGET
#define SPENT(h) (hc[h] >= g_until[h])
#else
#define SPENT(h) (hc[h] >= g_until[h] || hc[h] > g_through[h] && hc[h] > mark[h])
#endif

/* Forget what no longer matters, so that histories that differ only in it merge:
 * a spent grant, the last tick once the clock has left it, the send time of the
 * last renewal once the next one may be sent. */
inline canon(h) {
	if
	:: gr[h] && SPENT(h) -> revoke(h)
	:: else -> skip
	fi;

	if
	:: last[h] != hc[h] -> last[h] = 0
	:: else -> skip
	fi;
	if
	:: ph[h] != RENW && ph[h] != REN0W && ph[h] != RESW && ph[h] != RESA && ph[h] != RESR && hc[h] >= psent[h] + EVERY -> psent[h] = 0
	:: else -> skip
	fi
}

/* time passes, unless an ID past its checks must be returned first (PAUSE) */
proctype Time() {
	byte h;
end:
	do
	:: atomic { now < END && CALM ->
		now++;
		h = 0;
		do
		:: h < N ->
			if
			:: ph[h] == DEAD -> skip
			:: ph[h] != DEAD -> hc[h]++
			:: ph[h] != DEAD && drift[h] < DRIFT -> drift[h]++   /* stands still */
			fi;
			canon(h);
			h++
		:: h == N -> break
		od;
		h = 0;
		if
		:: s_tok != 0 && SNOW >= s_exp -> s_tok = 0; s_exp = 0   /* expired: free */
		:: else -> skip
		fi }
#if CLONES > 0
	/* the operator copies slot 0's journal (its data directory) onto a new one,
	 * at any moment, and starts a process there */
	:: atomic { clones < CLONES && !born[N - 1] && j_tok[0] != 0 ->
		clones++; born[N - 1] = 1;
		j_tok[N - 1] = j_tok[0]; j_mark[N - 1] = j_mark[0]; j_ep[N - 1] = j_ep[0]; j_cp[N - 1] = 1;
		procs++; gen[N - 1] = procs;
		if
		:: hc[N - 1] = now
		:: hc[N - 1] = now - OFF
		fi;
		rsm[N - 1] = 1; jload[N - 1] = j_mark[0]; cpload[N - 1] = 1; jeload[N - 1] = j_ep[0];
		rtok[N - 1] = j_tok[0]; rmark[N - 1] = j_mark[0];
		printf("t=%d: the journal of H0 (phase %d) is copied to H%d: token %d mark %d epoch %d; store: token %d, mark %d, epoch %d\n", now, ph[0], N - 1, j_tok[0], j_mark[0], j_ep[0], s_tok, s_mark, s_ep);
		ph[N - 1] = IDLE }
#endif
#ifdef REVERT
	/* a copy of slot 0's journal is saved (a backup, a snapshot), once */
	:: atomic { sv_st == 0 && j_tok[0] != 0 ->
		sv_tok = j_tok[0]; sv_mark = j_mark[0]; sv_ep = j_ep[0]; sv_cp = j_cp[0]; sv_st = 1;
		printf("t=%d: a copy of H0's journal is saved: token %d mark %d epoch %d\n", now, sv_tok, sv_mark, sv_ep) }
	/* and restored in place, over the journal of a process that has ended; its next
	 * process may come up with a clock ROFF behind (a VM snapshot). The store has
	 * been written past the write the copy names, or the slot issued nothing above
	 * its mark since (REVERT_ANY: also otherwise) */
	:: atomic { sv_st == 1 && ph[0] == DEAD && born[0] &&
#ifndef REVERT_ANY
		(s_ep > sv_ep || !sv_hi) &&
#endif
		restarts < RESTARTS ->
		j_tok[0] = sv_tok; j_mark[0] = sv_mark; j_ep[0] = sv_ep; j_cp[0] = sv_cp; sv_st = 2; rvd = 1;
		printf("t=%d: H0's journal is restored from the copy; store: token %d, mark %d, epoch %d\n", now, s_tok, s_mark, s_ep) }
#endif
#ifdef BUG_LOSTWRITE
	/* a failover to a replica that missed the last write */
	:: atomic { !failed && acqs > 0 -> failed = 1; s_tok = p_tok; s_exp = p_exp; s_mark = p_mark }
#endif
#ifdef BUG_STORESTEP
	:: atomic { sstep == 0 -> sstep = SSTEP }
#endif
	od
}

init {
	byte h;
	atomic {
		h = 0;
		do
		:: h < N ->
			hc[h] = BASE; born[h] = 1;
#if CLONES > 0
			if
			:: h == N - 1 -> born[h] = 0; hc[h] = 0; ph[h] = DEAD
			:: else -> skip
			fi;
#endif
			run Holder(h); h++
		:: h == N -> break
		od;
		h = 0;
		run Time()
	}
}
