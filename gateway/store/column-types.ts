/** The column types the table interfaces share (Kysely's ColumnType: what a column is read as, inserted as, updated as). */
import type { ColumnType } from 'kysely'

/** A timestamptz column: Date when read, Date or ISO string when written, defaulted by the database. */
export type CreatedAt = ColumnType<Date, Date | string | undefined, never>
export type Timestamp = ColumnType<Date, Date | string, Date | string>
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
/** jsonb: an object when read; written as JSON text so `pg` and PGlite store the same thing. */
export type Json<T = unknown> = ColumnType<T, string, string>
export type NullableJson<T = unknown> = ColumnType<T | null, string | null | undefined, string | null>
/** numeric comes back as a string from `pg` and PGlite alike; repositories convert it. */
export type Numeric = ColumnType<string | null, number | string | null | undefined, number | string | null>
/** A timestamptz column the database defaults on insert (`default now()`), set on update. */
export type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>
