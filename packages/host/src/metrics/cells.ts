import type { Aggregator, Registry } from 'prom-client';

/**
 * Metrics whose children are plain objects the hot path holds on to: an increment is an addition
 * on a field, never a label lookup. prom-client's own children hash their labels into a string on
 * every call; these render through the same registry (text format, cluster aggregation) by the
 * `get()` a registry asks each metric for (docs/operations.md "Metrics").
 */
type Labels = Record<string, string | number>;

/** What a registry reads from a metric (prom-client's `MetricObjectWithValues`, with the type as the text format writes it). */
interface Rendered {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  aggregator: Aggregator;
  values: { labels: Labels; value: number; metricName?: string }[];
}

export interface ValueCell {
  value: number;
}

export interface HistogramCell {
  /** Per bucket, not cumulative; the last slot is `+Inf`. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
  observe(value: number): void;
}

interface Family<C> {
  /** The child for these labels, made once; keep it. */
  child(labels?: Labels): C;
}

function register(registry: Registry, metric: { name: string; get(): Promise<Rendered> }): void {
  // A registry takes any object with a name and a `get()` (its aggregation too); prom-client's
  // types ask for its own classes, hence the call by reflection rather than a cast.
  Reflect.apply(registry.registerMetric, registry, [metric]);
}

export function valueFamily(
  registry: Registry,
  type: 'counter' | 'gauge',
  name: string,
  help: string,
  aggregator: Aggregator = 'sum',
  /** Reads the value at scrape time (a gauge of the process). */
  collect?: () => void,
): Family<ValueCell> {
  const cells: { labels: Labels; cell: ValueCell }[] = [];
  register(registry, {
    name,
    get: () => {
      collect?.();
      return Promise.resolve({
        name,
        help,
        type,
        aggregator,
        values: cells.map(({ labels, cell }) => ({ labels, value: cell.value })),
      });
    },
  });
  return {
    child(labels = {}) {
      const cell = { value: 0 };
      cells.push({ labels, cell });
      return cell;
    },
  };
}

export function histogramFamily(
  registry: Registry,
  name: string,
  help: string,
  bounds: readonly number[],
): Family<HistogramCell> {
  const cells: { labels: Labels; cell: HistogramCell }[] = [];
  register(registry, {
    name,
    get: () => {
      const values: Rendered['values'] = [];
      for (const { labels, cell } of cells) {
        let acc = 0;
        bounds.forEach((le, i) => {
          acc += cell.counts[i]!;
          values.push({ labels: { ...labels, le }, value: acc, metricName: `${name}_bucket` });
        });
        values.push({ labels: { ...labels, le: '+Inf' }, value: cell.count, metricName: `${name}_bucket` });
        values.push({ labels, value: cell.sum, metricName: `${name}_sum` });
        values.push({ labels, value: cell.count, metricName: `${name}_count` });
      }
      return Promise.resolve({ name, help, type: 'histogram', aggregator: 'sum', values });
    },
  });
  return {
    child(labels = {}) {
      const counts = new Float64Array(bounds.length + 1);
      const cell: HistogramCell = {
        counts,
        sum: 0,
        count: 0,
        observe(value) {
          let i = 0;
          while (i < bounds.length && value > bounds[i]!) i++;
          counts[i]!++;
          this.sum += value;
          this.count++;
        },
      };
      cells.push({ labels, cell });
      return cell;
    },
  };
}
