/**
 * An inspection API for tools (LevelDB's DumpFile is the model): open one table file and
 * read its footer, properties, index, filter and entries, verify its checksums; read a WAL or a
 * MANIFEST record by record; list a database directory's files; probe one table as a get does
 * ({@link io.bloomkv.engine.inspect.TableProbe}, whose {@code Writer} is the one thing here that writes: a single
 * new table file); count what is open ({@link io.bloomkv.engine.inspect.OpenResources}). Nothing here locks a
 * database, and nothing here exposes the engine's internal types: keys come decoded as
 * {@link io.bloomkv.engine.inspect.TableDump.Key}. To look at a whole live database, open it with
 * {@link io.bloomkv.engine.Options#readOnly(boolean)} and use {@link io.bloomkv.engine.Db#tables()}
 * and {@link io.bloomkv.engine.Db#stats()}.
 */
package io.bloomkv.engine.inspect;
