import freemarker.template.Configuration;
import freemarker.template.Template;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.StringReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

// RenderLeaf renders Leaf's monitor templates with FreeMarker as Leaf's server
// does (Spring Boot 1.5: a Configuration at FreeMarker's 2.3.0 defaults, the
// template in the request's locale), from the data model Leaf's controllers
// build. Written for flurry's tests from what Leaf's sources do; no Leaf code.
//
//	java RenderLeaf TEMPLATES LOCALE cache < lines    segment.ftl
//	java RenderLeaf TEMPLATES LOCALE db < lines       db.ftl
//	java RenderLeaf - - locales                       "${n}" for 1234567 in every locale
//
// cache reads "load<TAB>tag..." (the table's tags as Leaf's updateCacheFromDb
// reads them, one line per reload) and "view<TAB>tag<TAB>initOk<TAB>nextReady<TAB>pos
// <TAB>value0<TAB>max0<TAB>step0<TAB>value1<TAB>max1<TAB>step1"; db reads
// "row<TAB>tag<TAB>maxId<TAB>step<TAB>updateTime" in the table's order.
public class RenderLeaf {
    public static class View {
        private final String[] f;
        View(String[] f) { this.f = f; }
        public boolean isInitOk() { return Boolean.parseBoolean(f[2]); }
        public boolean isNextReady() { return Boolean.parseBoolean(f[3]); }
        public int getPos() { return Integer.parseInt(f[4]); }
        public long getValue0() { return Long.parseLong(f[5]); }
        public long getMax0() { return Long.parseLong(f[6]); }
        public int getStep0() { return Integer.parseInt(f[7]); }
        public long getValue1() { return Long.parseLong(f[8]); }
        public long getMax1() { return Long.parseLong(f[9]); }
        public int getStep1() { return Integer.parseInt(f[10]); }
    }

    public static class Alloc {
        private final String[] f;
        Alloc(String[] f) { this.f = f; }
        public String getKey() { return f[1]; }
        public long getMaxId() { return Long.parseLong(f[2]); }
        public int getStep() { return Integer.parseInt(f[3]); }
        public String getUpdateTime() { return f[4]; }
    }

    public static void main(String[] args) throws Exception {
        Configuration cfg = new Configuration(Configuration.VERSION_2_3_0);
        cfg.setDefaultEncoding("UTF-8");
        Writer out = new OutputStreamWriter(System.out, StandardCharsets.UTF_8);
        if (args[2].equals("locales")) {
            Template t = new Template("n", new StringReader("${n}"), cfg);
            for (Locale l : Locale.getAvailableLocales()) {
                Map<String, Object> model = new HashMap<>();
                model.put("n", 1234567L);
                t.setLocale(l);
                out.write(l.toLanguageTag() + "\t");
                t.process(model, out);
                out.write("\n");
            }
            out.flush();
            return;
        }
        cfg.setDirectoryForTemplateLoading(new File(args[0]));
        Locale locale = Locale.forLanguageTag(args[1]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Map<String, Object> model = new HashMap<>();
        String name;
        if (args[2].equals("cache")) {
            // SegmentIDGenImpl.cache and updateCacheFromDb, then the controller's copy.
            Map<String, View> cache = new ConcurrentHashMap<>();
            Map<String, View> views = new HashMap<>();
            List<List<String>> loads = new ArrayList<>();
            for (String line; (line = in.readLine()) != null; ) {
                String[] f = line.split("\t", -1);
                if (f[0].equals("load")) {
                    List<String> tags = new ArrayList<>();
                    for (int i = 1; i < f.length; i++) tags.add(f[i]);
                    loads.add(tags);
                } else {
                    views.put(f[1], new View(f));
                }
            }
            View zero = new View(new String[]{"", "", "false", "false", "0", "0", "0", "0", "0", "0", "0"});
            for (List<String> dbTags : loads) {
                if (dbTags.isEmpty()) continue;
                Set<String> insert = new HashSet<>(dbTags);
                insert.removeAll(new ArrayList<>(cache.keySet()));
                for (String tag : insert) cache.put(tag, zero);
                Set<String> remove = new HashSet<>(cache.keySet());
                remove.removeAll(dbTags);
                for (String tag : remove) cache.remove(tag);
            }
            Map<String, View> data = new HashMap<>();
            for (Map.Entry<String, View> e : cache.entrySet()) {
                View v = views.get(e.getKey());
                data.put(e.getKey(), v == null ? zero : v);
            }
            model.put("data", data);
            name = "segment.ftl";
        } else {
            List<Alloc> items = new ArrayList<>();
            for (String line; (line = in.readLine()) != null; ) {
                items.add(new Alloc(line.split("\t", -1)));
            }
            model.put("items", items);
            name = "db.ftl";
        }
        cfg.getTemplate(name, locale).process(model, out);
        out.flush();
    }
}
