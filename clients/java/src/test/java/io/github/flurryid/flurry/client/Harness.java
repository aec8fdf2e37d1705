package io.github.flurryid.flurry.client;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Real flurry servers for the tests: the flurry binary (FLURRY_BIN, or built from
 * this repository with go), {@code flurry serve} processes on free loopback ports
 * with configurations in temporary directories, and a TCP listener that accepts
 * connections and never answers. Everything started here is stopped by cleanup.
 */
final class Harness {
    private static final ArrayDeque<AutoCloseable> CLEANUPS = new ArrayDeque<>();
    private static String bin;
    private static String skip;

    /** The token of the namespace "secret" in serve's configuration. */
    static final String SECRET_TOKEN = "java-client-test-token";

    private Harness() {
    }

    static synchronized void onCleanup(AutoCloseable c) {
        CLEANUPS.push(c);
    }

    /** Runs every cleanup registered, last first. */
    static synchronized void cleanup() {
        while (!CLEANUPS.isEmpty()) {
            try {
                CLEANUPS.pop().close();
            } catch (Exception e) {
                System.out.println("cleanup: " + e);
            }
        }
    }

    /** A temporary directory, removed by cleanup. */
    static Path tempDir(String prefix) throws IOException {
        Path d = Files.createTempDirectory("flurry-java-" + prefix + "-");
        onCleanup(() -> {
            try (Stream<Path> w = Files.walk(d)) {
                w.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        });
        return d;
    }

    /** The repository's root: the nearest directory above the working directory whose go.mod is flurry's. */
    static Path repoRoot() throws IOException {
        Path d = Paths.get("").toAbsolutePath();
        for (; d != null; d = d.getParent()) {
            Path mod = d.resolve("go.mod");
            if (Files.exists(mod) && new String(Files.readAllBytes(mod), StandardCharsets.UTF_8).startsWith("module github.com/flurryid/flurry\n")) {
                return d;
            }
        }
        throw new IOException("the flurry repository's go.mod is not above the working directory; run the tests from clients/java in a checkout, or set FLURRY_BIN");
    }

    /**
     * The flurry binary: FLURRY_BIN if set, else {@code go build ./cmd/flurry} into
     * a temporary directory (the lean build: file stores, all these tests need).
     * Throws Skip when Go is not installed.
     */
    static synchronized String flurry() throws Exception {
        if (bin != null) {
            return bin;
        }
        if (skip != null) {
            throw new TestRunner.Skip(skip);
        }
        String given = System.getenv("FLURRY_BIN");
        if (given != null && !given.isEmpty()) {
            bin = given;
            return bin;
        }
        String out = tempDir("bin").resolve("flurry").toString();
        String go = System.getenv("GO") == null ? "go" : System.getenv("GO");
        Process p;
        try {
            p = new ProcessBuilder(go, "build", "-o", out, "./cmd/flurry").directory(repoRoot().toFile())
                .redirectErrorStream(true).start();
        } catch (IOException e) {
            skip = "go not installed (" + go + "); the tests build the flurry binary with it, or set FLURRY_BIN to one";
            throw new TestRunner.Skip(skip);
        }
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(8, TimeUnit.MINUTES) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException("go build ./cmd/flurry failed:\n" + log);
        }
        bin = out;
        return bin;
    }

    /** Runs flurry with args and returns its standard output; fails on a non-zero exit or after 60 s. */
    static String run(String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>();
        cmd.add(flurry());
        cmd.addAll(List.of(args));
        Path err = Files.createTempFile("flurry-java-run-", ".err");
        try {
            Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + ": no exit within 60 s");
            }
            if (p.exitValue() != 0) {
                throw new IOException(String.join(" ", cmd) + ": exit " + p.exitValue() + ": "
                    + new String(Files.readAllBytes(err), StandardCharsets.UTF_8));
            }
            return out;
        } finally {
            Files.deleteIfExists(err);
        }
    }

    /** A free TCP port on 127.0.0.1 (free when asked; the server binds it right after). */
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** A running flurry serve. */
    static final class Serve {
        final String url;
        final Process proc;
        final Path log;

        Serve(String url, Process proc, Path log) {
            this.url = url;
            this.proc = proc;
            this.log = log;
        }

        /** Sends a signal by name (KILL waits until the process is gone). */
        void signal(String sig) throws Exception {
            if (!proc.isAlive()) {
                return;
            }
            if (sig.equals("KILL")) {
                proc.destroyForcibly();
                proc.waitFor(30, TimeUnit.SECONDS);
                return;
            }
            Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(proc.pid())).inheritIO().start();
            k.waitFor(10, TimeUnit.SECONDS);
        }

        String log() throws IOException {
            return new String(Files.readAllBytes(log), StandardCharsets.UTF_8);
        }
    }

    /**
     * Starts flurry serve with these namespaces and waits until /readyz answers 200:
     * default (snowflake, the embedded default's layout, its worker leased from
     * leaseDir), twitter (Twitter's layout, datacenter 1, worker leased), segment
     * (in the server's own data directory), sessions (uuidv7), secret (needs
     * SECRET_TOKEN), small (max_count 100), medium (max_count 3000). Servers given the same leaseDir lease
     * distinct node values, so their IDs never collide.
     */
    static Serve startServe(Path leaseDir) throws Exception {
        Path dir = tempDir("serve");
        int port = freePort();
        String store = "file://" + leaseDir;
        Path conf = dir.resolve("flurry.yaml");
        String yaml = "listen: 127.0.0.1:" + port + "\n"
            + "data_dir: " + dir.resolve("data") + "\n"
            + "access: {public_readyz: true}\n"
            + "namespaces:\n"
            + "  default:\n"
            + "    strategy: snowflake\n"
            + "    snowflake: {lease: {store: \"" + store + "\"}}\n"
            + "  twitter:\n"
            + "    strategy: snowflake\n"
            + "    snowflake: {layout: twitter, node: datacenter=1, lease: {store: \"" + store + "\"}}\n"
            + "  segment:\n"
            + "    strategy: segment\n"
            + "    segment: {create: {step: 1000}}\n"
            + "  sessions:\n"
            + "    strategy: uuidv7\n"
            + "  secret:\n"
            + "    strategy: snowflake\n"
            + "    tokens: [\"" + SECRET_TOKEN + "\"]\n"
            + "    snowflake: {lease: {store: \"" + store + "\"}}\n"
            + "  small:\n"
            + "    strategy: snowflake\n"
            + "    max_count: 100\n"
            + "    snowflake: {lease: {store: \"" + store + "\"}}\n"
            + "  medium:\n"
            + "    strategy: snowflake\n"
            + "    max_count: 3000\n"
            + "    snowflake: {lease: {store: \"" + store + "\"}}\n";
        Files.write(conf, yaml.getBytes(StandardCharsets.UTF_8));
        return spawn(dir, List.of(flurry(), "serve", "--config", conf.toString()), port);
    }

    /**
     * Starts flurry serve on the embedded default (no configuration: "default" and
     * "segment" in a data directory of its own).
     */
    static Serve startServeDefault() throws Exception {
        Path dir = tempDir("default");
        int port = freePort();
        return spawn(dir, List.of(flurry(), "serve", "--data", dir.resolve("data").toString(), "--listen", "127.0.0.1:" + port), port);
    }

    private static Serve spawn(Path dir, List<String> args, int port) throws Exception {
        Path log = dir.resolve("serve.log");
        Process p = new ProcessBuilder(args).redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(log.toFile()).start();
        Serve s = new Serve("http://127.0.0.1:" + port, p, log);
        onCleanup(() -> {
            if (!p.isAlive()) {
                return;
            }
            new ProcessBuilder("kill", "-CONT", Long.toString(p.pid())).start().waitFor(10, TimeUnit.SECONDS);
            p.destroy(); // SIGTERM
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        });
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2)).build();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        String last = "";
        for (;;) {
            if (!p.isAlive()) {
                throw new IOException("flurry serve exited with " + p.exitValue() + " before it was ready:\n" + s.log());
            }
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(s.url + "/readyz"))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return s;
                }
                last = "HTTP " + r.statusCode();
            } catch (IOException e) {
                last = e.toString();
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("flurry serve at " + s.url + " not ready after 30 s (last: " + last + "):\n" + s.log());
            }
            // Polling a process that has no other way to say it is ready.
            Thread.sleep(50);
        }
    }

    /** A TCP listener on 127.0.0.1 that accepts connections, reads them, and never answers. */
    static final class Hung {
        final String url;
        private int accepted;
        private final ServerSocket server;
        private final List<Socket> sockets = new CopyOnWriteArrayList<>();

        Hung() throws IOException {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            url = "http://127.0.0.1:" + server.getLocalPort();
            Thread t = new Thread(() -> {
                while (!server.isClosed()) {
                    try {
                        Socket s = server.accept();
                        synchronized (this) {
                            accepted++;
                            notifyAll();
                        }
                        sockets.add(s);
                        Thread r = new Thread(() -> drain(s), "hung-reader");
                        r.setDaemon(true);
                        r.start();
                    } catch (IOException e) {
                        return;
                    }
                }
            }, "hung-listener");
            t.setDaemon(true);
            t.start();
            onCleanup(this::close);
        }

        /** How many connections it has accepted. */
        synchronized int accepted() {
            return accepted;
        }

        /** Waits until it has accepted n connections (at most 30 s). */
        synchronized void awaitAccepted(int n) throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (accepted < n) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("the listener accepted " + accepted + " connections, want " + n);
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        }

        private static void drain(Socket s) {
            byte[] buf = new byte[4096];
            try (InputStream in = s.getInputStream()) {
                while (in.read(buf) >= 0) {
                    // read and never answer
                }
            } catch (IOException e) {
                // closed
            }
        }

        void close() throws IOException {
            server.close();
            for (Socket s : sockets) {
                s.close();
            }
        }
    }
}
