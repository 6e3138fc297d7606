package io.bloomkv.engine.internal.version;

import io.bloomkv.engine.internal.InternalKey;
import io.bloomkv.engine.internal.util.ByteReader;
import io.bloomkv.engine.internal.util.ByteWriter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A change to the set of live tables, as one MANIFEST record: files added and removed per level,
 * and the counters (log number, next file number, last sequence, compaction pointers).
 * Layout: a sequence of tagged fields, engine/FORMAT.md "MANIFEST and VersionEdit". Tags are
 * on-disk constants.
 */
public final class VersionEdit {
    static final int TAG_LOG_NUMBER = 1;
    static final int TAG_NEXT_FILE_NUMBER = 2;
    static final int TAG_LAST_SEQUENCE = 3;
    static final int TAG_COMPACT_POINTER = 4;
    static final int TAG_DELETED_FILE = 5;
    static final int TAG_NEW_FILE = 6;
    static final int TAG_NUM_LEVELS = 7;
    /** varint32 1: every value carries a 4-byte write time (Options.ttl, engine/FORMAT.md "TTL values"); only 1 is valid. */
    static final int TAG_TTL = 8;

    /** Levels a MANIFEST may name; guards decoding. */
    static final int MAX_LEVELS = 64;

    /** A (level, file) pair. */
    public record LevelFile(int level, FileMetaData file) {}

    /** A removed file. */
    public record DeletedFile(int level, long number) {}

    /** Where the next compaction of a level starts (an internal key). */
    public record CompactPointer(int level, byte[] key) {}

    private Long logNumber;
    private Long nextFileNumber;
    private Long lastSequence;
    private Integer numLevels;
    private boolean ttl;
    private final List<CompactPointer> compactPointers = new ArrayList<>();
    private final List<DeletedFile> deletedFiles = new ArrayList<>();
    private final List<LevelFile> newFiles = new ArrayList<>();

    /** WAL files numbered below this are no longer needed. */
    public VersionEdit logNumber(long n) {
        this.logNumber = n;
        return this;
    }

    public VersionEdit nextFileNumber(long n) {
        this.nextFileNumber = n;
        return this;
    }

    public VersionEdit lastSequence(long n) {
        this.lastSequence = n;
        return this;
    }

    public VersionEdit numLevels(int n) {
        this.numLevels = n;
        return this;
    }

    /** Marks the database as a TTL database (written in every MANIFEST snapshot record of one). */
    public VersionEdit ttl(boolean ttl) {
        this.ttl = ttl;
        return this;
    }

    /** True when this record says the database is a TTL database. */
    public boolean ttl() {
        return ttl;
    }

    public VersionEdit compactPointer(int level, byte[] internalKey) {
        compactPointers.add(new CompactPointer(level, internalKey));
        return this;
    }

    public VersionEdit deleteFile(int level, long number) {
        deletedFiles.add(new DeletedFile(level, number));
        return this;
    }

    public VersionEdit addFile(int level, FileMetaData f) {
        newFiles.add(new LevelFile(level, Objects.requireNonNull(f)));
        return this;
    }

    public Long logNumber() {
        return logNumber;
    }

    public Long nextFileNumber() {
        return nextFileNumber;
    }

    public Long lastSequence() {
        return lastSequence;
    }

    public Integer numLevels() {
        return numLevels;
    }

    public List<CompactPointer> compactPointers() {
        return Collections.unmodifiableList(compactPointers);
    }

    public List<DeletedFile> deletedFiles() {
        return Collections.unmodifiableList(deletedFiles);
    }

    public List<LevelFile> newFiles() {
        return Collections.unmodifiableList(newFiles);
    }

    public byte[] encode() {
        ByteWriter w = new ByteWriter(64 + newFiles.size() * 64);
        if (numLevels != null) {
            w.putVarint32(TAG_NUM_LEVELS).putVarint32(numLevels);
        }
        if (ttl) {
            w.putVarint32(TAG_TTL).putVarint32(1);
        }
        if (logNumber != null) {
            w.putVarint32(TAG_LOG_NUMBER).putVarint64(logNumber);
        }
        if (nextFileNumber != null) {
            w.putVarint32(TAG_NEXT_FILE_NUMBER).putVarint64(nextFileNumber);
        }
        if (lastSequence != null) {
            w.putVarint32(TAG_LAST_SEQUENCE).putVarint64(lastSequence);
        }
        for (CompactPointer p : compactPointers) {
            w.putVarint32(TAG_COMPACT_POINTER).putVarint32(p.level()).putLengthPrefixed(p.key());
        }
        for (DeletedFile d : deletedFiles) {
            w.putVarint32(TAG_DELETED_FILE).putVarint32(d.level()).putVarint64(d.number());
        }
        for (LevelFile lf : newFiles) {
            FileMetaData f = lf.file();
            w.putVarint32(TAG_NEW_FILE)
                    .putVarint32(lf.level())
                    .putVarint64(f.number())
                    .putVarint64(f.fileSize())
                    .putLengthPrefixed(f.smallest())
                    .putLengthPrefixed(f.largest())
                    .putVarint64(f.entries())
                    .putVarint64(f.smallestSequence())
                    .putVarint64(f.largestSequence());
        }
        return w.toByteArray();
    }

    /** @throws ByteReader.MalformedInputException when the record does not parse */
    public static VersionEdit decode(byte[] record) {
        VersionEdit e = new VersionEdit();
        ByteReader r = new ByteReader(record);
        while (r.hasRemaining()) {
            int tagPos = r.position();
            int tag = r.getVarint32();
            switch (tag) {
                case TAG_LOG_NUMBER:
                    e.logNumber = r.getVarint64();
                    break;
                case TAG_NEXT_FILE_NUMBER:
                    e.nextFileNumber = r.getVarint64();
                    break;
                case TAG_LAST_SEQUENCE:
                    e.lastSequence = r.getVarint64();
                    break;
                case TAG_NUM_LEVELS:
                    e.numLevels = level(r);
                    break;
                case TAG_TTL: {
                    int pos = r.position();
                    if (r.getVarint32() != 1) {
                        throw new ByteReader.MalformedInputException("TTL flag other than 1", pos);
                    }
                    e.ttl = true;
                    break;
                }
                case TAG_COMPACT_POINTER:
                    e.compactPointers.add(new CompactPointer(level(r), internalKey(r)));
                    break;
                case TAG_DELETED_FILE:
                    e.deletedFiles.add(new DeletedFile(level(r), r.getVarint64()));
                    break;
                case TAG_NEW_FILE: {
                    int level = level(r);
                    long number = r.getVarint64();
                    long size = r.getVarint64();
                    byte[] smallest = internalKey(r);
                    byte[] largest = internalKey(r);
                    long entries = r.getVarint64();
                    long smallestSeq = r.getVarint64();
                    long largestSeq = r.getVarint64();
                    e.newFiles.add(new LevelFile(
                            level,
                            new FileMetaData(number, size, smallest, largest, entries, smallestSeq, largestSeq)));
                    break;
                }
                default:
                    throw new ByteReader.MalformedInputException("unknown VersionEdit tag " + tag, tagPos);
            }
        }
        return e;
    }

    private static int level(ByteReader r) {
        int pos = r.position();
        int level = r.getVarint32();
        if (level < 0 || level >= MAX_LEVELS) {
            throw new ByteReader.MalformedInputException("level out of range: " + level, pos);
        }
        return level;
    }

    private static byte[] internalKey(ByteReader r) {
        int pos = r.position();
        byte[] k = r.getLengthPrefixed();
        if (k.length < InternalKey.TRAILER_SIZE) {
            throw new ByteReader.MalformedInputException("internal key shorter than its trailer", pos);
        }
        return k;
    }

    @Override
    public String toString() {
        return "VersionEdit{" + (ttl ? "ttl, " : "") + "log=" + logNumber + ", next=" + nextFileNumber + ", lastSeq="
                + lastSequence + ", deleted=" + deletedFiles + ", added=" + newFiles + "}";
    }
}
