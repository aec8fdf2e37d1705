import com.sankuai.inf.leaf.common.Result;
import com.sankuai.inf.leaf.common.Status;
import com.sankuai.inf.leaf.snowflake.SnowflakeIDGenImpl;
import com.sun.net.httpserver.HttpServer;

import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

// A Leaf snowflake server for flurry's tests: Meituan Leaf's own
// SnowflakeIDGenImpl (and through it SnowflakeZookeeperHolder, the ZooKeeper
// registry), served over HTTP as leaf-server's LeafController serves it:
//
//   GET /api/snowflake/get/{key}   one ID, text/plain; 500 when Leaf's get fails
//   GET /ids/{n}                   n calls of get: the IDs, one a line, then
//                                  "failed K" for the calls that failed
//
// Arguments: the ZooKeeper address (leaf.snowflake.zk.address), the port Leaf
// registers (leaf.snowflake.port; "http": the HTTP port) and the HTTP port (0:
// any free one). leaf.name comes from
// leaf.properties on the classpath; workerID.properties lives under
// java.io.tmpdir, as in Leaf.
public class LeafServer {
    public static void main(String[] args) throws Exception {
        String zk = args[0];
        // Bind first (port 0: any free one), so that a port taken meanwhile fails
        // the start before Leaf registers a node for it.
        HttpServer srv = HttpServer.create(new InetSocketAddress(Integer.parseInt(args[2])), 64);
        int httpPort = srv.getAddress().getPort();
        int port = args[1].equals("http") ? httpPort : Integer.parseInt(args[1]);
        SnowflakeIDGenImpl gen = new SnowflakeIDGenImpl(zk, port);
        srv.createContext("/api/snowflake/get/", ex -> {
            Result r = gen.get("key");
            byte[] b;
            int code = 200;
            if (r.getStatus() == Status.SUCCESS) {
                b = String.valueOf(r.getId()).getBytes(StandardCharsets.UTF_8);
            } else {
                code = 500;
                b = ("{\"status\":500,\"error\":\"Internal Server Error\",\"message\":\"" + r + "\"}").getBytes(StandardCharsets.UTF_8);
            }
            ex.getResponseHeaders().set("Content-Type", "text/plain;charset=UTF-8");
            ex.sendResponseHeaders(code, b.length);
            try (OutputStream o = ex.getResponseBody()) {
                o.write(b);
            }
        });
        srv.createContext("/ids/", ex -> {
            int n = Integer.parseInt(ex.getRequestURI().getPath().substring("/ids/".length()));
            StringBuilder sb = new StringBuilder(n * 20);
            int failed = 0;
            for (int i = 0; i < n; i++) {
                Result r = gen.get("key");
                if (r.getStatus() == Status.SUCCESS) {
                    sb.append(r.getId()).append('\n');
                } else {
                    failed++;
                }
            }
            sb.append("failed ").append(failed).append('\n');
            byte[] b = sb.toString().getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, b.length);
            try (OutputStream o = ex.getResponseBody()) {
                o.write(b);
            }
        });
        srv.start();
        System.out.println("LEAF READY ip " + com.sankuai.inf.leaf.common.Utils.getIp() + " port " + port + " http " + httpPort + " worker " + gen.getWorkerId());
        System.out.flush();
    }
}
