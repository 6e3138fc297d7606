package io.bloomkv.engine.internal.table;

import io.bloomkv.engine.fs.FileSystem;
import io.bloomkv.engine.fs.WritableFile;
import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.ValueType;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;

/** Test data: tables whose present user keys are the even numbers {@code 0, 2, ... 2(n-1)}. */
final class TestTables {
    private TestTables() {}

    record Version(long seq, ValueType type, byte[] value) {}

    /** Versions of every user key, newest first. */
    static final class Model {
        final TreeMap<byte[], List<Version>> versions = new TreeMap<>(java.util.Arrays::compareUnsigned);
        final List<byte[][]> entries = new ArrayList<>(); // {internalKey, value} in table order

        /** The newest version of {@code userKey} visible at {@code snapshot}, or null. */
        Version visible(byte[] userKey, long snapshot) {
            List<Version> vs = versions.get(userKey);
            if (vs == null) {
                return null;
            }
            for (Version v : vs) {
                if (v.seq() <= snapshot) {
                    return v;
                }
            }
            return null;
        }
    }

    static byte[] userKey(long i) {
        return String.format("key%010d", i).getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * {@code n} user keys {@code userKey(2i)}, each with 1–3 versions (a random one a tombstone),
     * sequence numbers unique and increasing with the version.
     */
    static Model model(int n, Random rnd) {
        Model m = new Model();
        long seq = 1;
        for (int i = 0; i < n; i++) {
            byte[] uk = userKey(2L * i);
            int nv = 1 + rnd.nextInt(3);
            List<Version> vs = new ArrayList<>();
            for (int v = 0; v < nv; v++) {
                seq += 1 + rnd.nextInt(3);
                boolean del = rnd.nextInt(8) == 0;
                byte[] value = del
                        ? new byte[0]
                        : ("value-" + i + "-" + v + "-" + rnd.nextInt(1000)).getBytes(StandardCharsets.US_ASCII);
                vs.add(0, new Version(seq, del ? ValueType.DELETE : ValueType.PUT, value));
            }
            m.versions.put(uk, vs);
            for (Version v : vs) {
                m.entries.add(new byte[][] {InternalKey.encode(uk, v.seq(), v.type()), v.value()});
            }
        }
        return m;
    }

    static TableProperties write(FileSystem fs, Path p, Model m, TableBuilderOptions opts) throws IOException {
        WritableFile f = fs.newWritableFile(p);
        try (TableWriter w = new TableWriter(f, opts, m.versions.size())) {
            for (byte[][] e : m.entries) {
                w.add(e[0], e[1]);
            }
            return w.finish();
        }
    }
}
