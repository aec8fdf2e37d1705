/*
 * redisplain.pml: redisgen's plain path (Next's one HINCRBY) as a Promela model
 * for SPIN. docs/correctness.md explains it; model_test.go runs it.
 *
 * An ID is (tick, node value, sequence). Each Redis keeps, per node value n, a
 * counter of the next free slot, slot = tick*S + seq (redisgen/script.go,
 * counterField: the field "slot@<layout hash>/<node values>" of {ns}:last). A
 * client gets a slot in two ways (redisgen/redisgen.go):
 *   the script  (NextN, and Next's fallback; counterScript), one atomic step:
 *               -1 if the Redis's node hash does not hold the client's node
 *               value (the client reads it again: a new issuer, without
 *               confirmations); else t = Redis TIME's tick and first = HINCRBY
 *               - 1: first within tick t's slots is issued; first below them
 *               moves the counter to t*S+1 and t*S is issued; first at or past
 *               (t+1)*S is undone and the client sleeps until the next tick. An
 *               issued slot is a confirmation (tick, sent, recv) of the issuer
 *               (issuer.confirm keeps the last one, cur, and the one before of
 *               another tick, prev).
 *   the plain   (nextPlain) HINCRBY of the node value's counter alone, sent only
 *     call      while now - cur.sent < W. Its slot s is taken only if cur or prev
 *               covers it (confirmation.covers): c.tick == s/S and max(recv,
 *               c.recv) - min(sent, c.sent) <= W. Otherwise it is burned and the
 *               goroutine runs the script next; if s/S > cur.tick while another
 *               goroutine of the client runs the script (the flight), it may
 *               instead wait for that call to end and check again.
 * Time is discrete: `now` is real time, every Redis's clock (tick = now / U) and
 * every client's monotonic clock; it starts in tick BT (the layout's epoch lies
 * BT ticks back). Each call is sent, run (one atomic step on a Redis) and
 * answered in three steps, any time apart. A client has NG goroutines sharing
 * its issuer (node value and confirmations); the first runs Next (plain calls,
 * and the script when Next falls back), the second NextN (scripts: the flight,
 * or any NextN call), so a client has at most one plain call in flight. A
 * goroutine reads the node value again only when the other one has no call of
 * the old issuer in flight (in the code that call goes on with the old issuer).
 * A second client (NC = 2) has an issuer of its own.
 *
 * Two configurations:
 *   default     two independent primaries R0 and R1. Every call runs on either
 *               one, as a moved VIP or DNS name, or a pool with connections to
 *               both, would make it: the most a redirect can do. R0 holds node
 *               value 0, R1 value H1 (default NONE: none). An operator moves
 *               values (OPS steps in all): a Redis gives its value up, whose last
 *               tick is then the tick of that Redis's counter of it (which
 *               counts every slot it issued or burned); a Redis holding none gets
 *               a value given up once its tick is at least that last tick + GAP
 *               (rule (c): "more than a tick past the old holder's last tick").
 *   -DREPLICA   R0 holds value 0 and serves alone; R1 is its asynchronous replica.
 *               R0 may stop once; R1 takes over FAILOVER or more steps after R0's
 *               last executed command, with a copy of R0's counter that may lag
 *               (any value from 0 to R0's).
 *
 * Invariant, checked on every slot a client takes (script or plain):
 *   no (node value, slot) is taken twice, checked against one witness ID that
 *   the search chooses nondeterministically (w_id) instead of a record of every
 *   ID: assert(id != w_id).
 *
 * Assumptions, as parameters:
 *   FAILOVER > W   the failover takes longer than the window (the plain path);
 *                  FAILOVER >= U makes the new primary's TIME pass every tick
 *                  the old one issued in (the script path);
 *   GAP >= 2       rule (c), measured on the old holder's counter;
 *   STRAY          a counter of a node value on a Redis that does not hold it
 *                  moves at most STRAY times (plain calls that reached the wrong
 *                  Redis), per Redis and tenure. Uniqueness needs STRAY <=
 *                  (GAP-1)*S (an old holder's counter stays below the ticks of
 *                  the next holder) and STRAY <= BT*S (a counter that never had
 *                  a holder stays below the first tick). Nothing in the code
 *                  bounds it: with 4096 slots per tick it takes thousands of
 *                  misrouted calls (docs/correctness.md).
 *
 * Known-bad variants, chosen with -D, each of which must produce a counterexample:
 *   BUG_SHARED_FIELD  one counter for all node values (the field name has no node
 *                     values): a redirected client takes a slot from another
 *                     Redis's counter
 *   BUG_NOWINDOW      plain replies are taken without the time check (only the
 *                     tick check)
 *   BUG_NOTICK        plain replies are taken without the tick check (only the
 *                     time check)
 * and failed assumptions by parameters: FAILOVER < U (-DREPLICA -DFAILOVER=1,
 * the script path), FAILOVER = W (-DREPLICA -DFAILOVER=2, the plain path),
 * GAP = 1, STRAY = S + 1 (-DSTRAY=3).
 */

#ifndef U
#define U 2          /* grid steps per tick (Redis TIME's tick = now / U) */
#endif
#ifndef S
#define S 2          /* slots (sequence values) per tick */
#endif
#ifndef W
#define W 2          /* the plain window, in grid steps (Options.PlainWindow) */
#endif
#ifndef FAILOVER
#define FAILOVER 3   /* -DREPLICA: least steps from R0's last command to R1's first */
#endif
#ifndef GAP
#define GAP 2        /* rule (c): a value's next holder starts GAP ticks after its last tick */
#endif
#ifndef STRAY
#define STRAY 2      /* increments of a counter on a Redis that does not hold its value */
#endif
#ifndef BT
#define BT 1         /* real time starts in this tick: ticks since the layout's epoch */
#endif
#ifndef HORIZON
#define HORIZON 4    /* how long the model runs, in grid steps */
#endif
#ifndef NC
#define NC 1         /* clients (Generators), each with its own issuer */
#endif
#ifndef NG
#define NG 2         /* goroutines per client: 1 (Next), or 2 (Next and NextN) */
#endif
#ifndef OPS
#define OPS 2        /* operator steps, in all */
#endif
#ifndef H1
#define H1 NONE      /* R1's first node value */
#endif

#define NONE  2      /* no node value */
#define NV    2      /* node values 0 and 1 */
#define BASE  (BT * U) /* real time starts here */
#define END   (BASE + HORIZON)
#define NSLOT ((END / U + 3) * S)   /* more slots than the real protocol reaches */
#define NGT   (NC * NG)

#ifdef BUG_SHARED_FIELD
#define FLD(n) 0     /* one counter for every node value */
#else
#define FLD(n) (n)
#endif

/* goroutine phases */
#define IDLE   0     /* Next or NextN next */
#define PSENT  1     /* plain HINCRBY sent */
#define PREPLY 2     /* executed; the reply (sl) is on its way */
#define PWAIT  3     /* answered at aux, not covered, tick above cur: waits for the flight */
#define SSENT  4     /* script sent */
#define SREPLY 5     /* executed; the reply (sl) is on its way */
#define SSLEEP 6     /* the tick was used up: sleeps until tick aux */
#define SREAD  7     /* the script answered -1: reads the node value again */
#define SNEED  8     /* a plain slot was burned: the script next (Next's fallback) */

/* script replies other than a slot */
#define M1   254     /* -1: the node hash does not hold the value */
#define FULL 255     /* used up, or the counter is ahead of TIME: wait */

#define max(a, b) ((a) > (b) -> (a) : (b))
#define min(a, b) ((a) < (b) -> (a) : (b))

byte now = BASE;

/* the Redis servers */
bit  up[2];                  /* serving commands */
byte held[2];                /* the node hash's value, NONE if none */
byte ctr[2 * NV];            /* ctr[r*NV + n]: counter of node value n on Redis r (0: absent) */
byte stray[2 * NV];          /* increments of ctr[r*NV + n] while r does not hold n */
#ifdef REPLICA
byte last0;                  /* when R0 last executed a command */
bit  failed;                 /* R0 stopped */
#else
byte rel[NV];                /* the last tick of a value given up, by the counter */
bit  free[NV];               /* given up, not given out again */
byte ops;                    /* operator steps so far */
#endif

/* the clients: issuer and confirmations (tick 0: none) */
byte nv[NC];                 /* node value of the issuer, NONE before the first read */
byte cur_t[NC], cur_s[NC], cur_r[NC];
byte prv_t[NC], prv_s[NC], prv_r[NC];

/* the goroutines */
byte ph[NGT];
byte tm[NGT];                /* the call's send time */
byte sl[NGT];                /* the reply: a slot, M1 or FULL */
byte aux[NGT];               /* PWAIT: the plain reply's receive time; SSLEEP: the tick to wake in */

/* the witness: one taken ID, chosen by the search (n*NSLOT + slot + 1; 0: none yet) */
byte w_id;

/* confirmation.covers: (ct, cs, cr) covers a plain slot of tick t, sent at ps and answered at pr */
#ifdef BUG_NOWINDOW
#define COVERS(t, ps, pr, ct, cs, cr) ((ct) != 0 && (t) == (ct))
#elif defined(BUG_NOTICK)
#define COVERS(t, ps, pr, ct, cs, cr) ((ct) != 0 && max(pr, cr) - min(ps, cs) <= W)
#else
#define COVERS(t, ps, pr, ct, cs, cr) ((ct) != 0 && (t) == (ct) && max(pr, cr) - min(ps, cs) <= W)
#endif
/* does client c take goroutine j's plain slot, answered at pr? */
#define TAKES(c, j, pr) (COVERS(sl[j] / S, tm[j], pr, cur_t[c], cur_s[c], cur_r[c]) || \
                         COVERS(sl[j] / S, tm[j], pr, prv_t[c], prv_s[c], prv_r[c]))

/* the other goroutine of goroutine i's client, and whether it is in NextN */
#if NG == 2
#define OTHER(i) ((i) ^ 1)
#define INNEXTN(j) (ph[j] == SSENT || ph[j] == SREPLY || ph[j] == SSLEEP || ph[j] == SREAD)
#define OTHERNEXTN(i) INNEXTN(OTHER(i))
/* a re-read waits until the other goroutine has no call of the old issuer in flight */
#define OTHERQUIET(i) (ph[OTHER(i)] == IDLE || ph[OTHER(i)] == SNEED || ph[OTHER(i)] == SREAD || ph[OTHER(i)] == PWAIT)
#define PW(c) (ph[2*(c)] == PWAIT)
#define PLAINS(c) (ph[2*(c)] == PSENT || ph[2*(c)] == PREPLY || ph[2*(c)] == PWAIT)
#else
#define OTHERNEXTN(i) false
#define OTHERQUIET(i) true
#define PW(c) false
#define PLAINS(c) (ph[c] == PSENT || ph[c] == PREPLY)
#endif

/* a plain call of node value n may run on Redis r */
#ifdef BUG_NOTICK
/* taking slots of later ticks, plain calls would move a counter without end */
#define CANP(r, n) (up[r] && (held[r] == (n) || stray[(r)*NV + (n)] < STRAY) && ctr[(r)*NV + FLD(n)] < NSLOT - 1)
#else
#define CANP(r, n) (up[r] && (held[r] == (n) || stray[(r)*NV + (n)] < STRAY))
#endif

/* value n may be given out: no Redis holds it, and rule (c) */
#define CANGIVE(n) (free[n] && now / U >= rel[n] + GAP)

#ifdef REPLICA
#define RAN(r) if :: (r) == 0 -> last0 = now :: else -> skip fi
#else
#define RAN(r) skip
#endif

/* the client takes slot s of node value n: the invariant, against the witness */
inline take(j, n, s) {
	assert(s < NSLOT);
	id = (n) * NSLOT + (s) + 1;
	printf("t=%d: G%d takes value %d slot %d (tick %d)\n", now, j, n, s, (s) / S);
	if
	:: w_id == 0 ->
		if
		:: w_id = id   /* make it the witness */
		:: skip
		fi
	:: else -> assert(id != w_id)
	fi;
	id = 0
}

inline clearconf(c) {
	cur_t[c] = 0; cur_s[c] = 0; cur_r[c] = 0;
	prv_t[c] = 0; prv_s[c] = 0; prv_r[c] = 0
}

/* issuer.confirm: record (t, s, r) unless a later-sent one is there. A receive
 * time matters only to a plain reply that came before it (PWAIT); without one it
 * is kept as 0, which no later reply's receive time is below. */
inline confirm(c, t, s, r) {
	if
	:: cur_t[c] != 0 && cur_s[c] >= s -> skip
	:: else ->
		if
		:: cur_t[c] == 0 -> prv_t[c] = 0; prv_s[c] = 0; prv_r[c] = 0
		:: cur_t[c] != 0 && cur_t[c] != t -> prv_t[c] = cur_t[c]; prv_s[c] = cur_s[c]; prv_r[c] = cur_r[c]
		:: cur_t[c] != 0 && cur_t[c] == t -> skip   /* the same tick: prev stays */
		fi;
		cur_t[c] = t; cur_s[c] = s;
		if
		:: PW(c) -> cur_r[c] = r
		:: else -> cur_r[c] = 0
		fi;
		printf("t=%d: G%d confirmation (tick %d, sent %d, recv %d)\n", now, i, t, s, r)
	fi
}

inline done(j) {
	tm[j] = 0; sl[j] = 0; aux[j] = 0
}

/* goroutine j's plain reply, answered at pr, checked against the confirmations now */
inline recheck(c, j, pr) {
	if
	:: TAKES(c, j, pr) -> take(j, nv[c], sl[j]); done(j); ph[j] = IDLE
	:: else -> printf("t=%d: G%d burns slot %d\n", now, j, sl[j]); done(j); ph[j] = SNEED
	fi;
	cur_r[c] = 0; prv_r[c] = 0   /* no reply waits any more */
}

/* the script on Redis r (counterScript, for one ID) */
inline script(i, c, r) {
	if
	:: held[r] != nv[c] -> sl[i] = M1
	:: else ->
		t = now / U; f = ctr[r*NV + FLD(nv[c])];
		if
		:: f >= t*S && f < t*S + S -> ctr[r*NV + FLD(nv[c])] = f + 1; sl[i] = f
		:: f < t*S -> ctr[r*NV + FLD(nv[c])] = t*S + 1; sl[i] = t*S
		:: f >= t*S + S -> sl[i] = FULL; aux[i] = t + 1   /* the increment is undone */
		fi;
		t = 0; f = 0
	fi;
	if
	:: sl[i] == M1 -> printf("t=%d: G%d script (value %d) on R%d: -1\n", now, i, nv[c], r)
	:: sl[i] == FULL -> printf("t=%d: G%d script (value %d) on R%d: wait\n", now, i, nv[c], r)
	:: else -> printf("t=%d: G%d script (value %d) on R%d: slot %d\n", now, i, nv[c], r, sl[i])
	fi;
	RAN(r)
}

/* readNode on some serving Redis, then the script; ErrNodeUnset if it holds none */
inline reread(i, c) {
	if
	:: up[0] -> r = 0
	:: up[1] -> r = 1
	fi;
	clearconf(c);
	if
	:: held[r] != NONE ->
		printf("t=%d: G%d reads the node value of R%d: %d\n", now, i, r, held[r]);
		nv[c] = held[r]; tm[i] = now; ph[i] = SSENT
	:: else ->
		printf("t=%d: G%d reads the node value of R%d: none\n", now, i, r);
		nv[c] = NONE; ph[i] = IDLE
	fi;
	r = 0
}

proctype G(byte i) {
	byte c = i / NG;
	byte r, t, f, id;
end:
	do
	/* ---- Next: the plain path (nextPlain) ---- */
	:: atomic { i % NG == 0 && ph[i] == IDLE && nv[c] != NONE && cur_t[c] != 0 && now - cur_s[c] < W ->
		tm[i] = now; ph[i] = PSENT }
	/* it runs on a Redis: HINCRBY of the node value's counter */
	:: atomic { ph[i] == PSENT && (CANP(0, nv[c]) || CANP(1, nv[c])) ->
		if
		:: CANP(0, nv[c]) -> r = 0
		:: CANP(1, nv[c]) -> r = 1
		fi;
		if
		:: held[r] != nv[c] -> stray[r*NV + nv[c]]++
		:: else -> skip
		fi;
		sl[i] = ctr[r*NV + FLD(nv[c])]; ctr[r*NV + FLD(nv[c])]++;
		printf("t=%d: G%d plain (value %d, sent %d) on R%d: slot %d\n", now, i, nv[c], tm[i], r, sl[i]);
		RAN(r); r = 0; ph[i] = PREPLY }
	/* the reply: taken, burned, or (tick above cur, a flight runs) wait for the flight */
	:: atomic { ph[i] == PREPLY ->
		if
		:: TAKES(c, i, now) -> take(i, nv[c], sl[i]); done(i); ph[i] = IDLE
		:: !TAKES(c, i, now) -> printf("t=%d: G%d burns slot %d\n", now, i, sl[i]); done(i); ph[i] = SNEED
		:: !TAKES(c, i, now) && cur_t[c] != 0 && sl[i] / S > cur_t[c] && OTHERNEXTN(i) ->
			aux[i] = now; ph[i] = PWAIT
		fi }
	:: atomic { ph[i] == PWAIT && !OTHERNEXTN(i) -> recheck(c, i, aux[i]) }

	/* ---- NextN (or Next's fallback): the script ---- */
	:: atomic { (ph[i] == IDLE || ph[i] == SNEED) && nv[c] != NONE -> tm[i] = now; ph[i] = SSENT }
	:: atomic { (ph[i] == IDLE || ph[i] == SNEED) && nv[c] == NONE && (up[0] || up[1]) -> reread(i, c) }
	:: atomic { ph[i] == SSENT && (up[0] || up[1]) ->
		if
		:: up[0] -> r = 0
		:: up[1] -> r = 1
		fi;
		script(i, c, r); r = 0; ph[i] = SREPLY }
	:: atomic { ph[i] == SREPLY ->
		if
		:: sl[i] == M1 -> done(i); ph[i] = SREAD
		:: sl[i] == FULL -> tm[i] = 0; sl[i] = 0; ph[i] = SSLEEP
		:: sl[i] != M1 && sl[i] != FULL ->
			confirm(c, sl[i] / S, tm[i], now);
			take(i, nv[c], sl[i]); done(i); ph[i] = IDLE
		fi }
	:: atomic { ph[i] == SSLEEP && now / U >= aux[i] -> aux[i] = 0; tm[i] = now; ph[i] = SSENT }
	:: atomic { ph[i] == SREAD && OTHERQUIET(i) && (up[0] || up[1]) ->
#if NG == 2
		if
		:: ph[OTHER(i)] == PWAIT -> recheck(c, OTHER(i), aux[OTHER(i)])
		:: else -> skip
		fi;
#endif
		reread(i, c) }
	od
}

/* Forget what no longer matters, so that histories that differ only in it merge:
 * confirmations no plain reply can use any more (every later reply comes more
 * than W after their send: the send guard and covers both refuse it), and the
 * tick a goroutine sleeps until once it has come. */
inline canon(c) {
	if
	:: cur_t[c] != 0 && now - cur_s[c] > W && !PLAINS(c) -> clearconf(c)
	:: else -> skip
	fi;
	if
	:: prv_t[c] != 0 && now - prv_s[c] > W && !PLAINS(c) -> prv_t[c] = 0; prv_s[c] = 0; prv_r[c] = 0
	:: else -> skip
	fi;
	j = c * NG;
	do
	:: j < (c + 1) * NG ->
		if
		:: ph[j] == SSLEEP && now / U >= aux[j] -> aux[j] = 0
		:: else -> skip
		fi;
		j++
	:: else -> break
	od;
	j = 0
}

/* time, the failover, the operator */
proctype World() {
	byte n, r, v, j;
end:
	do
	:: atomic { now < END ->
		now++;
		canon(0);
#if NC == 2
		canon(1);
#endif
		skip }
#ifdef REPLICA
	/* R0 stops; R1 takes over FAILOVER or more after R0's last command, with a copy
	 * of the counter that may lag */
	:: atomic { up[0] && !failed -> up[0] = 0; failed = 1; printf("t=%d: R0 stops\n", now) }
	:: atomic { failed && !up[1] && now >= last0 + FAILOVER ->
		v = ctr[0];
		do
		:: v > 0 -> v--
		:: break
		od;
		printf("t=%d: R1 takes over; its copy of the counter: %d (R0's: %d)\n", now, v, ctr[0]);
		ctr[NV] = v; v = 0; last0 = 0; up[1] = 1 }
#else
	/* Redis r gives its value up: the value's last tick is its counter's */
	:: atomic { ops < OPS && (held[0] != NONE || held[1] != NONE) ->
		if
		:: held[0] != NONE -> r = 0
		:: held[1] != NONE -> r = 1
		fi;
		n = held[r];
		if
		:: ctr[r*NV + FLD(n)] == 0 -> rel[n] = 0
		:: else -> rel[n] = (ctr[r*NV + FLD(n)] - 1) / S
		fi;
		printf("t=%d: R%d gives value %d up; its counter %d: last tick %d\n", now, r, n, ctr[r*NV + FLD(n)], rel[n]);
		held[r] = NONE; free[n] = 1; ops++; n = 0; r = 0 }
	/* a Redis that holds none gets a value no Redis holds, by rule (c) */
	:: atomic { ops < OPS && (held[0] == NONE || held[1] == NONE) && (CANGIVE(0) || CANGIVE(1)) ->
		if
		:: held[0] == NONE -> r = 0
		:: held[1] == NONE -> r = 1
		fi;
		if
		:: CANGIVE(0) -> n = 0
		:: CANGIVE(1) -> n = 1
		fi;
		printf("t=%d (tick %d): R%d gets value %d\n", now, now / U, r, n);
		held[r] = n; stray[r*NV + n] = 0; rel[n] = 0; free[n] = 0; ops++;
		n = 0; r = 0 }
#endif
	od
}

init {
	byte i;
	atomic {
		up[0] = 1; held[0] = 0;
#ifdef REPLICA
		held[1] = 0;
#else
		up[1] = 1; held[1] = H1;
#endif
		i = 0;
		do
		:: i < NC -> nv[i] = NONE; i++
		:: i == NC -> break
		od;
		i = 0;
		do
		:: i < NGT -> run G(i); i++
		:: i == NGT -> break
		od;
		i = 0;
		run World()
	}
}
