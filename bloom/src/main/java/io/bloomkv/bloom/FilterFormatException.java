package io.bloomkv.bloom;

/**
 * A serialized filter could not be read: bad magic, unsupported version, unknown kind or hash version,
 * inconsistent sizes, wrong length or a CRC32C mismatch. Callers that must never give a false negative
 * (the engine) treat such a filter as "might contain everything".
 */
public class FilterFormatException extends IllegalArgumentException {
    public FilterFormatException(String message) {
        super(message);
    }
}
