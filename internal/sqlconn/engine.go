package sqlconn

import (
	"fmt"
	"strconv"
	"strings"
)

// Engine names a SQL engine. Each store's exported Dialect has the same values.
type Engine int

// The engines. The zero Engine is none of them.
const (
	Postgres Engine = iota + 1 // PostgreSQL 10 or later
	MySQL                      // MySQL 8 or MariaDB 10.3 or later
	SQLite                     // SQLite 3.35 or later
)

// Name returns "postgres", "mysql" or "sqlite", or "" for an unknown engine.
func (e Engine) Name() string {
	switch e {
	case Postgres:
		return "postgres"
	case MySQL:
		return "mysql"
	case SQLite:
		return "sqlite"
	}
	return ""
}

// Title is the engine's name for people: "PostgreSQL", "MySQL" or "SQLite".
func (e Engine) Title() string {
	switch e {
	case Postgres:
		return "PostgreSQL"
	case MySQL:
		return "MySQL"
	case SQLite:
		return "SQLite"
	}
	return e.String()
}

// String returns Name, or "Dialect(n)" for an unknown engine: the stores' Dialect
// types print through it.
func (e Engine) String() string {
	if name := e.Name(); name != "" {
		return name
	}
	return "Dialect(" + strconv.Itoa(int(e)) + ")"
}

// Known reports whether e is one of the three engines.
func (e Engine) Known() bool { return e.Name() != "" }

// Dollars turns ? placeholders into PostgreSQL's $1, $2, ... The statements must
// have no ? inside string literals.
func Dollars(s string) string {
	var b strings.Builder
	n := 0
	for _, c := range s {
		if c == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Placeholders rewrites statements written with ? placeholders for engine e, in
// place: PostgreSQL's become $1, $2, ...; the other engines take ? as it is.
func Placeholders(e Engine, stmts ...*string) {
	if e != Postgres {
		return
	}
	for _, s := range stmts {
		*s = Dollars(*s)
	}
}
