package io.bloomkv.bench.workload;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

/**
 * The keys of a run. Key {@code i} of the load has id {@code 2i}; the absent keys have odd ids
 * {@code 2i+1} for {@code i < num-1}, so each lies strictly between two loaded keys: inside every
 * table's key range, where only the filter (not the min/max check) can reject it.
 *
 * <p>A key is {@code keySize} bytes: the id as 8 big-endian bytes (so unsigned byte order is id
 * order), followed by filler bytes derived from the id (so keys differ in every position, as
 * real keys do, but never reorder).
 */
public final class KeySpace {
    /** A key's first 8 bytes (its id) as one long, for {@link #matches}. */
    private static final VarHandle BIG_ENDIAN =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    /** A whole filler word of a key as one long, for {@link #matches}. */
    private static final VarHandle LITTLE_ENDIAN =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final long num;
    private final int keySize;

    /** @throws IllegalArgumentException if num < 2 or keySize < 8 */
    public KeySpace(long num, int keySize) {
        if (num < 2) {
            throw new IllegalArgumentException("num must be at least 2, got " + num);
        }
        if (keySize < 8) {
            throw new IllegalArgumentException("keySize must be at least 8, got " + keySize);
        }
        this.num = num;
        this.keySize = keySize;
    }

    public long num() {
        return num;
    }

    public int keySize() {
        return keySize;
    }

    /**
     * Id of the {@code j}-th loaded key, {@code 0 <= j < num}. Strictly increasing in {@code j}, and key order is id
     * order, so the loaded keys in key order are those of load indices 0, 1, ..., num-1: the loaded keys at and after
     * loaded key {@code j} are {@code j, j+1, ...}, with no key set held in memory.
     */
    public long loadedId(long j) {
        checkIndex(j, num);
        return 2 * j;
    }

    /** The load index {@code j} of loaded id {@code id} (the inverse of {@link #loadedId}). */
    public long loadedIndex(long id) {
        if ((id & 1) != 0) {
            throw new IllegalArgumentException("not a loaded id: " + id);
        }
        checkIndex(id / 2, num);
        return id / 2;
    }

    /** Number of distinct absent ids inside the loaded range. */
    public long missingCount() {
        return num - 1;
    }

    /** Id of the {@code j}-th absent key, {@code 0 <= j < num-1}: between loaded ids 2j and 2j+2. */
    public long missingId(long j) {
        checkIndex(j, num - 1);
        return 2 * j + 1;
    }

    /** True when the load writes this id. */
    public boolean isLoaded(long id) {
        return id >= 0 && id < 2 * num && (id & 1) == 0;
    }

    /** The key bytes of an id (fresh array). */
    public byte[] key(long id) {
        byte[] k = new byte[keySize];
        for (int i = 0; i < 8; i++) {
            k[i] = (byte) (id >>> (56 - 8 * i));
        }
        long f = mix64(id);
        for (int i = 8; i < keySize; i++) {
            if ((i & 7) == 0 && i > 8) {
                f = mix64(f);
            }
            k[i] = (byte) (f >>> (8 * (i & 7)));
        }
        return k;
    }

    /**
     * True when {@code k} equals {@link #key(long) key(id)}, byte for byte, without allocating. It compares eight bytes
     * at a time (the id big-endian, each whole filler word little-endian, as {@link #key} writes them): a seek check
     * runs it on every entry a scan returns.
     */
    public boolean matches(byte[] k, long id) {
        if (k == null || k.length != keySize || (long) BIG_ENDIAN.get(k, 0) != id) {
            return false;
        }
        long f = mix64(id);
        int i = 8;
        for (; i + 8 <= keySize; i += 8) {
            if (i > 8) {
                f = mix64(f);
            }
            if ((long) LITTLE_ENDIAN.get(k, i) != f) {
                return false;
            }
        }
        if (i < keySize && i > 8) {
            f = mix64(f);
        }
        for (; i < keySize; i++) {
            if (k[i] != (byte) (f >>> (8 * (i & 7)))) {
                return false;
            }
        }
        return true;
    }

    /** The id a key was made from (its first 8 bytes). */
    public static long idOf(byte[] key) {
        long id = 0;
        for (int i = 0; i < 8; i++) {
            id = (id << 8) | (key[i] & 0xFF);
        }
        return id;
    }

    public byte[] smallestKey() {
        return key(0);
    }

    public byte[] largestKey() {
        return key(2 * (num - 1));
    }

    /** A seeded permutation of the load indices 0..num-1 (Fisher-Yates): the fillrandom order. */
    public int[] shuffledLoadOrder(long seed) {
        int[] order = new int[Math.toIntExact(num)];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int i = order.length - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }

    /** Stafford's mix13 finaliser: a bijection on longs. */
    static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    private static void checkIndex(long j, long bound) {
        if (j < 0 || j >= bound) {
            throw new IndexOutOfBoundsException("index " + j + " outside [0, " + bound + ")");
        }
    }
}
