package io.github.flurryid.flurry.client;

import java.util.Objects;

/** The few assertions the tests need. */
final class Check {
    private Check() {
    }

    static void ok(boolean cond, String what) {
        if (!cond) {
            throw new AssertionError(what);
        }
    }

    static void eq(Object want, Object got, String what) {
        if (!Objects.equals(want, got)) {
            throw new AssertionError(what + ": want " + want + ", got " + got);
        }
    }

    static void contains(String text, String part, String what) {
        if (text == null || !text.contains(part)) {
            throw new AssertionError(what + ": " + Json.quote(String.valueOf(text)) + " does not contain " + Json.quote(part));
        }
    }

    /** A body that may throw anything. */
    interface Thrower {
        void run() throws Exception;
    }

    /** Runs body and returns what it threw, which must be a type; else fails. */
    static <E extends Throwable> E thrown(Class<E> type, Thrower body) {
        try {
            body.run();
        } catch (Throwable e) {
            if (type.isInstance(e)) {
                return type.cast(e);
            }
            AssertionError a = new AssertionError("want " + type.getSimpleName() + ", got " + e);
            a.initCause(e);
            throw a;
        }
        throw new AssertionError("want " + type.getSimpleName() + ", nothing was thrown");
    }
}
