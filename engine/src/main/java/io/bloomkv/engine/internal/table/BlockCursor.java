package io.bloomkv.engine.internal.table;

/**
 * What a point read needs of one data block's entries (internal keys): a {@link BlockIterator} over a {@link Block},
 * or an {@link InPlaceBlock} over a verified block where it lies in the table's mapping. Both answer alike for the
 * same bytes; {@code TableReader}'s block search is written once against this.
 */
interface BlockCursor {
    /** Positions at the first entry whose internal key is >= {@code userKey[0, userLen) || trailer}. */
    void seekInternal(byte[] userKey, int userLen, long trailer);

    void seekToFirst();

    boolean valid();

    /** The next entry (valid() must hold). */
    void next();

    /** Length of the current entry's internal key. */
    int keyLength();

    /** Unsigned order of the current internal key's user key (length >= trailer, checked by the caller). */
    int compareCurrentUserKey(byte[] userKey);

    /** The trailer (sequence and type) of the current internal key. */
    long currentTrailer();

    /** A copy of the current entry's value. */
    byte[] value();
}
