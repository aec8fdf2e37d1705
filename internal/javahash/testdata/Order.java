import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

// Order prints the iteration order of Java's own hash tables for the cases on
// standard input, one per line, tab-separated:
//
//	set  k1 k2 ...     new HashSet<>(Arrays.asList(k1, k2, ...))
//	map  +k1 -k2 ...   new HashMap<>(), then put (+) and remove (-) in turn
//	chm  +k1 -k2 ...   new ConcurrentHashMap<>(), the same
//	clone +k1 -k2 ...  a HashMap as map makes it, then its clone()
//
// and writes each table's keys in iteration order, tab-separated, a line a case.
public class Order {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.split("\t", -1);
            Iterable<String> keys;
            if (f[0].equals("set")) {
                Set<String> s = new HashSet<>(Arrays.asList(f).subList(1, f.length));
                keys = s;
            } else {
                Map<String, Boolean> m = f[0].equals("chm") ? new ConcurrentHashMap<String, Boolean>() : new HashMap<String, Boolean>();
                for (int i = 1; i < f.length; i++) {
                    String k = f[i].substring(1);
                    if (f[i].charAt(0) == '+') {
                        m.put(k, Boolean.TRUE);
                    } else {
                        m.remove(k);
                    }
                }
                if (f[0].equals("clone")) {
                    @SuppressWarnings("unchecked")
                    Map<String, Boolean> c = (Map<String, Boolean>) ((HashMap<String, Boolean>) m).clone();
                    m = c;
                }
                keys = m.keySet();
            }
            out.println(String.join("\t", keys));
        }
        out.flush();
    }
}
