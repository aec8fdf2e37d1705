/*
 * lease.pml: flurry's node-value lease protocol as a Promela model for SPIN.
 * docs/correctness.md explains it; lease_test.go runs it.
 *
 * One node value, one store, N holder processes. Each holder may crash at any
 * moment and come back as a new process (RESTARTS times), whose clock may be OFF
 * behind real time. The network delays every request and reply without bound, may
 * lose a request before the store runs it, and may lose its reply; a caller may give
 * up waiting at any moment (the request may still run later). Time is discrete:
 * `now` is real time, and the store's clock. A holder's clock hc[h] advances with
 * it but may stand still for DRIFT units in all (a clock slower than the store's),
 * and may step forward by STEP once. Between a generator's reading of its clock and
 * the ID it returns, a process may pause for up to PAUSE units.
 *
 * The model follows lease/session.go (tryAcquire, renew, Close), the stores'
 * Acquire/Renew/Release (one atomic step each, expiry judged by the store's clock),
 * and the checks of snowflake/generator.go's reserve (Above < tick <= Through,
 * clock < Until). A tick is a reading of the holder's clock; one ID per holder and
 * tick stands for all the IDs of that tick (sequence numbers never collide across
 * node values or ticks, so only a shared tick can).
 *
 * Invariants, checked on every ID as it is returned:
 *   I1  no two acquisitions of the value issue in the same tick (no duplicate ID);
 *   I2  every ID's tick is at or below the store's mark when the ID is returned
 *       (the window was reserved before it was issued into);
 *   I3  acquisitions are ordered: every tick of a later acquisition is above every
 *       tick of an earlier one, whenever each was issued;
 *   I4  exclusivity: a holder issues only while the store holds its lease live
 *       (a call already past the fence when Close revoked is exempt; I1-I3 cover
 *       it through the release mark).
 * I1 and I3 are checked against one witness ID that the search chooses
 * nondeterministically (w_tick, w_tok), instead of a record of every ID.
 *
 * Known-bad variants, chosen with -D, each of which must produce a counterexample:
 *   BUG_REPLY         the fence is measured from the renewal's reply, not its send
 *   BUG_NORESERVE     a renewal's window is granted when it is sent, before the
 *                     store has written it
 *   BUG_NOPLUS1       a new holder issues from the mark's own tick
 *   BUG_RELEASE_ABOVE Close releases with the mark it found, not with what it issued
 *   BUG_NOTOKEN       the store renews a live lease without comparing the token
 *   BUG_LOSTWRITE     the store loses its last write once (a failover to an
 *                     asynchronous replica)
 *   BUG_STORESTEP     the store's clock steps forward by SSTEP once
 * and failed assumptions by parameters: MARGIN too small or DRIFT too large for the
 * other, PAUSE too long (with NO_EXCL, which drops I4: I1-I3 hold under any pause).
 */

#ifndef N
#define N 2          /* holder processes */
#endif
#ifndef TTL
#define TTL 6        /* the lease's time to live (10 s by default) */
#endif
#ifndef MARGIN
#define MARGIN 2     /* the fence's margin, TTL/10 + 50 ms */
#endif
#ifndef RES
#define RES 5        /* how far ahead a write reserves: Window + renewal interval */
#endif
#ifndef EVERY
#define EVERY 2      /* the renew loop's interval, min(TTL/3, Window) (2 s) */
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

#define BASE 4       /* real time starts here, so that every clock stays positive */
#define END  (BASE + HORIZON)

/* session phases (lease/session.go) */
#define IDLE   0     /* the acquire loop: Store.Acquire next */
#define ACQW   1     /* waiting for Acquire */
#define REN0W  2     /* tryAcquire: waiting for the first Renew, which reserves */
#define REL0   3     /* tryAcquire: the first Renew failed; Release(l, l.Mark) next */
#define HELD   4     /* granted; the renew loop runs */
#define RENW   5     /* waiting for a renewal */
#define DEAD   6     /* crashed, or closed */

/* requests and replies */
#define NONE 0
#define ACQ  1
#define REN  2
#define REL  3
#define OK   1
#define FAIL 2

#define max(a, b) ((a) > (b) -> (a) : (b))
#define min(a, b) ((a) < (b) -> (a) : (b))

byte now = BASE;            /* real time, and the store's clock (plus sstep) */

/* the store's record of the value */
byte s_tok;                 /* token of the live lease, 0 when free; tokens are 1, 2, ... */
byte s_exp;                 /* its expiry, by the store's clock */
byte s_mark;                /* the high-water mark */
byte acqs;                  /* acquisitions so far: the next token is acqs + 1 */
byte restarts;              /* new processes so far */
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

/* per holder process: the session */
byte ph[N];                 /* phase */
byte tok[N];                /* token of the lease held or being reserved */
byte above[N];              /* l.Mark: the mark earlier holders left */
byte mark[N];               /* s.mark: the reservation the store confirmed */
byte pmark[N];              /* the mark of the Renew in flight */
byte psent[N];              /* the holder's clock when it was sent */
/* per holder process: its request in flight, and the reply */
byte rq[N];
byte rq_tok[N], rq_mark[N];
bit  orphan[N];             /* no caller waits for it: its reply is dropped */
byte rp[N];
byte rp_tok[N], rp_mark[N]; /* Acquire's token and mark */
/* per holder process: the generator */
bit  gr[N];                 /* granted, not revoked */
byte g_above[N], g_through[N], g_until[N], g_tok[N];
byte last[N];               /* tick of the last ID returned, while the clock is in it */
byte pend[N];               /* tick of an ID past the checks, not returned yet (0: none) */
byte pdl[N];                /* real time by which it is returned */
byte ptok[N];               /* the acquisition it belongs to */
bit  pex[N];                /* it was past the fence when Close revoked */
/* per holder process: the clock */
byte hc[N];
byte drift[N];              /* units it stood still */
bit  stepped[N];

/* the witness ID for I1 and I3 */
byte w_tick, w_tok;

/* ---- the store: each operation is one atomic step ---- */

inline snapshot() {
#ifdef BUG_LOSTWRITE
	p_tok = s_tok; p_exp = s_exp; p_mark = s_mark;
#endif
	skip
}

/* Acquire: a value no live lease holds; the expiry by the store's clock */
inline store_acquire(h) {
	if
	:: (s_tok == 0 || SNOW >= s_exp) && acqs < MAXACQ ->
		snapshot();
		acqs++; s_tok = acqs; s_exp = SNOW + TTL;
		if
		:: !orphan[h] -> rp[h] = OK; rp_tok[h] = s_tok; rp_mark[h] = s_mark
		:: else -> skip
		fi
	:: else ->
		if
		:: !orphan[h] -> rp[h] = FAIL   /* ErrNoFreeValue */
		:: else -> skip
		fi
	fi
}

/* Renew: the live lease of this token only; raises the mark, never lowers it */
inline store_renew(h) {
	if
#ifdef BUG_NOTOKEN
	:: s_tok != 0 && SNOW < s_exp ->
#else
	:: s_tok == rq_tok[h] && SNOW < s_exp ->
#endif
		snapshot();
		s_exp = SNOW + TTL; s_mark = max(s_mark, rq_mark[h]);
		if
		:: !orphan[h] -> rp[h] = OK
		:: else -> skip
		fi
	:: else ->
		if
		:: !orphan[h] -> rp[h] = FAIL   /* ErrLost */
		:: else -> skip
		fi
	fi
}

/* Release: the live lease of this token only; sets the mark, even lower */
inline store_release(h) {
	if
	:: s_tok == rq_tok[h] && SNOW < s_exp ->
		snapshot();
		s_tok = 0; s_exp = 0; s_mark = rq_mark[h]
	:: else -> skip
	fi
}

inline send(h, kind, t, m) {
	rq[h] = kind; rq_tok[h] = t; rq_mark[h] = m
}

/* a fenced grant: from the renewal's send (or, BUG_REPLY, from its reply) */
inline grant(h) {
	g_above[h] = above[h]; g_through[h] = pmark[h];
#ifdef BUG_REPLY
	g_until[h] = hc[h] + TTL - MARGIN;
#else
	g_until[h] = psent[h] + TTL - MARGIN;
#endif
	g_tok[h] = tok[h]; gr[h] = 1
}

inline revoke(h) {
	gr[h] = 0; g_above[h] = 0; g_through[h] = 0; g_until[h] = 0; g_tok[h] = 0
}

/* the session is gone (crash, or Close returned); a request in flight stays */
inline end_session(h) {
	ph[h] = DEAD; revoke(h);
	tok[h] = 0; above[h] = 0; mark[h] = 0; pmark[h] = 0; psent[h] = 0;
	rp[h] = NONE; rp_tok[h] = 0; rp_mark[h] = 0;
	hc[h] = 0; drift[h] = 0; stepped[h] = 0;
	if
	:: rq[h] != NONE -> orphan[h] = 1
	:: else -> skip
	fi
}

/* an ID is returned: check it */
inline issue(h) {
#ifndef NO_EXCL
	/* I4 */
	assert(pex[h] || (s_tok == ptok[h] && SNOW < s_exp));
#endif
	/* I2 */
	assert(pend[h] <= s_mark);
	if
	:: w_tok == 0 ->
		if
		:: w_tick = pend[h]; w_tok = ptok[h]   /* make it the witness */
		:: skip
		fi
	:: else ->
		/* I1 */
		assert(pend[h] != w_tick || ptok[h] == w_tok);
		/* I3 */
		assert((ptok[h] <= w_tok || pend[h] > w_tick) && (ptok[h] >= w_tok || pend[h] < w_tick))
	fi;
	if
	:: ph[h] != DEAD -> last[h] = pend[h]
	:: else -> skip
	fi;
	pend[h] = 0; pdl[h] = 0; ptok[h] = 0; pex[h] = 0
}

proctype Holder(byte h) {
	byte d;
end:
	do
	/* ---- the session (lease/session.go) ---- */
	:: atomic { ph[h] == IDLE && rq[h] == NONE -> send(h, ACQ, 0, 0); ph[h] = ACQW }
	:: atomic { ph[h] == ACQW && rp[h] != NONE ->
		if
		:: rp[h] == OK ->
			/* tryAcquire: reserve a window before the generator may issue in it */
			tok[h] = rp_tok[h]; above[h] = rp_mark[h];
			psent[h] = hc[h]; pmark[h] = max(above[h], hc[h]) + RES;
			send(h, REN, tok[h], pmark[h]); ph[h] = REN0W
		:: else -> ph[h] = IDLE
		fi;
		rp[h] = NONE; rp_tok[h] = 0; rp_mark[h] = 0 }
	:: atomic { ph[h] == REN0W && rp[h] != NONE ->
		if
		:: rp[h] == OK -> mark[h] = pmark[h]; grant(h); ph[h] = HELD
		:: else -> ph[h] = REL0
		fi;
		rp[h] = NONE; pmark[h] = 0 }
	/* tryAcquire's Release(l, l.Mark) after a failed first Renew; its outcome does
	 * not matter to the caller */
	:: atomic { ph[h] == REL0 && rq[h] == NONE ->
		send(h, REL, tok[h], above[h]); orphan[h] = 1;
		tok[h] = 0; above[h] = 0; psent[h] = 0; ph[h] = IDLE }
	/* the renew loop, EVERY or later after the last renewal */
	:: atomic { ph[h] == HELD && rq[h] == NONE && hc[h] >= psent[h] + EVERY ->
		psent[h] = hc[h]; pmark[h] = max(mark[h], hc[h] + RES);
#ifdef BUG_NORESERVE
		grant(h);
#endif
		send(h, REN, tok[h], pmark[h]); ph[h] = RENW }
	:: atomic { ph[h] == RENW && rp[h] != NONE ->
		if
		:: rp[h] == OK -> mark[h] = pmark[h]; grant(h); ph[h] = HELD
		:: else -> revoke(h); ph[h] = IDLE   /* ErrLost: stop, acquire again */
		fi;
		rp[h] = NONE; pmark[h] = 0 }
	/* the caller gives up: the request may still run, its reply is dropped */
	:: atomic { (ph[h] == ACQW || ph[h] == REN0W || ph[h] == RENW) ->
		if
		:: rq[h] != NONE -> orphan[h] = 1
		:: else -> skip
		fi;
		rp[h] = NONE; rp_tok[h] = 0; rp_mark[h] = 0; pmark[h] = 0;
		if
		:: ph[h] == ACQW -> ph[h] = IDLE
		:: ph[h] == REN0W -> ph[h] = REL0
		:: ph[h] == RENW -> ph[h] = HELD   /* the grant runs on to its Until */
		fi }
	/* Close: revoke, then release with what was issued (IssuedThrough) */
	:: atomic { ph[h] == HELD && rq[h] == NONE ->
		pex[h] = (pend[h] != 0);
#ifdef BUG_RELEASE_ABOVE
		d = above[h];
#else
		d = min(mark[h], max(max(last[h] + 1, hc[h]), above[h]));
#endif
		send(h, REL, tok[h], d); d = 0;
		end_session(h) }
	/* a crash: the process and its generator are gone (a crash while it holds
	 * nothing is no different from a process that does nothing more) */
	:: atomic { (ph[h] == REN0W || ph[h] == HELD || ph[h] == RENW) ->
		end_session(h); last[h] = 0; pend[h] = 0; pdl[h] = 0; ptok[h] = 0; pex[h] = 0 }
	/* a new process, whose clock may be behind */
	:: atomic { ph[h] == DEAD && restarts < RESTARTS && rq[h] == NONE && pend[h] == 0 ->
		restarts++; last[h] = 0;
		if
		:: hc[h] = now
		:: hc[h] = now - OFF
		fi;
		ph[h] = IDLE }
#if STEP > 0
	/* the clock steps forward */
	:: atomic { ph[h] != DEAD && !stepped[h] -> hc[h] = hc[h] + STEP; stepped[h] = 1 }
#endif

	/* ---- the network and the store, for this process's request ---- */
	/* the store runs it */
	:: atomic { rq[h] != NONE ->
		if
		:: rq[h] == ACQ -> store_acquire(h)
		:: rq[h] == REN -> store_renew(h)
		:: rq[h] == REL -> store_release(h)
		fi;
		rq[h] = NONE; rq_tok[h] = 0; rq_mark[h] = 0; orphan[h] = 0 }
	/* it is lost (a request whose caller still waits is lost the same way: the
	 * caller gives up, then the request is lost) */
	:: atomic { rq[h] != NONE && orphan[h] -> rq[h] = NONE; rq_tok[h] = 0; rq_mark[h] = 0; orphan[h] = 0 }

	/* ---- the generator (snowflake/generator.go, reserve) ---- */
	/* it reads the clock and passes the checks */
	:: atomic { gr[h] && pend[h] == 0 && hc[h] != last[h] && hc[h] < g_until[h] &&
#ifdef BUG_NOPLUS1
		hc[h] >= g_above[h] &&
#else
		hc[h] > g_above[h] &&
#endif
		hc[h] <= g_through[h] ->
		pend[h] = hc[h]; pdl[h] = now + PAUSE; ptok[h] = g_tok[h] }
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

/* Forget what no longer matters, so that histories that differ only in it merge:
 * a grant the clock has run past, the last tick once the clock has left it, the
 * send time of the last renewal once the next one may be sent. */
inline canon(h) {
	if
	:: gr[h] && (hc[h] >= g_until[h] || hc[h] > g_through[h]) -> revoke(h)
	:: else -> skip
	fi;
	if
	:: last[h] != hc[h] -> last[h] = 0
	:: else -> skip
	fi;
	if
	:: ph[h] != RENW && ph[h] != REN0W && hc[h] >= psent[h] + EVERY -> psent[h] = 0
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
		:: h < N -> hc[h] = BASE; run Holder(h); h++
		:: h == N -> break
		od;
		h = 0;
		run Time()
	}
}
