-- Per-run aggregates of a native trace's request rows, as reporter.metrics computes them from
-- the whole table and reporter.stream.aggregates from batches. The rows are a table or view
-- named `requests` with the columns of the native Parquet (reporter/parquet.py), request
-- rows only. In DuckDB:
--   CREATE VIEW requests AS
--     SELECT * FROM read_parquet('trace-folder/**/*.parquet') WHERE kind = 'request';
-- In Spark: spark.read.parquet("trace-folder").where("kind = 'request'")
--   .createOrReplaceTempView("requests"), then spark.sql(this file).
-- Every figure is exact: medians by the engine's sort (DuckDB median, Spark percentile;
-- approx_quantile / percentile_approx trade exactness for memory), the decode overlap by a
-- running maximum over each run's intervals sorted by first token (gaps and islands).
WITH rows AS (
    SELECT
        run,
        t_send,
        t_first,
        t_end,
        prompt_tokens,
        output_tokens,
        reported_tps,
        -- a request that did not complete counts toward no aggregate (reporter.table.UNFINISHED)
        (finish_reason IS NULL
            OR finish_reason NOT IN ('error', 'abort', 'cancelled', 'time_limit', 'too_short'))
            AND error IS NULL AS ok,
        -- a tool's own durations stand in where there are no absolute times (LLMPerf)
        coalesce(t_first - t_send, ttft) AS ttft,
        coalesce(t_end - t_send, e2e) AS e2e,
        coalesce(t_end - t_first, e2e - ttft) AS decode_s
    FROM requests
),
timed AS (
    SELECT
        *,
        CASE WHEN output_tokens >= 2 AND decode_s > 0
            THEN output_tokens / decode_s END AS decode_tps
    FROM rows
),
figures AS (
    SELECT
        run,
        count(*) AS requests,
        count(*) FILTER (WHERE ok) AS ok,
        sum(output_tokens) FILTER (WHERE ok) AS output_tokens,
        min(t_send) AS t0,
        max(t_end) AS t1,
        sum(reported_tps) FILTER (WHERE ok) AS sum_reported_tps,
        sum(e2e) AS sum_e2e,
        min(output_tokens) FILTER (WHERE ok) AS out_min,
        max(output_tokens) FILTER (WHERE ok) AS out_max,
        avg(output_tokens) FILTER (WHERE ok) AS out_mean,
        stddev_pop(output_tokens) FILTER (WHERE ok) AS out_std,
        max(t_send) - min(t_send) AS send_spread_s,
        sum(prompt_tokens) AS prompt_tokens_total,
        avg(prompt_tokens) AS prompt_tokens_mean,
        count(t_send) AS n_send,
        count(t_first) AS n_first,
        count(t_end) FILTER (WHERE ok) AS n_end,
        count(reported_tps) FILTER (WHERE ok) AS n_reported,
        median(ttft) FILTER (WHERE ok) AS median_ttft_s,
        median(decode_tps) FILTER (WHERE ok) AS median_decode_tps,
        median(e2e) FILTER (WHERE ok) AS median_e2e_s,
        sum(decode_s) FILTER (WHERE ok AND t_first IS NOT NULL AND t_end IS NOT NULL)
            AS decode_total_s
    FROM timed
    GROUP BY run
),
decoding AS (
    SELECT run, t_first AS s, t_end AS e
    FROM rows
    WHERE ok AND t_first IS NOT NULL AND t_end IS NOT NULL
),
reached AS (
    -- how far the earlier intervals of the run reach: a new island starts beyond it
    SELECT
        run, s, e,
        max(e) OVER (PARTITION BY run ORDER BY s, e
                     ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
    FROM decoding
),
islands AS (
    SELECT
        run, s, e,
        sum(CASE WHEN reach IS NULL OR s > reach THEN 1 ELSE 0 END)
            OVER (PARTITION BY run ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS island
    FROM reached
),
unions AS (
    SELECT run, sum(length) AS union_s
    FROM (SELECT run, island, max(e) - min(s) AS length FROM islands GROUP BY run, island) AS i
    GROUP BY run
)
SELECT
    figures.*,
    t1 - t0 AS wall_s,
    output_tokens / nullif(t1 - t0, 0) AS aggregate_tps,
    sum_e2e / nullif(t1 - t0, 0) AS in_flight,
    CASE WHEN union_s > 0 THEN decode_total_s / union_s END AS overlap
FROM figures LEFT JOIN unions USING (run)
ORDER BY run;
