// The ECharts Bulwark loads: only the chart types and components its charts use, bundled by
// `make site` (esbuild) into vendor/echarts.min.js — about a third of the full build. A chart
// that needs another series type or component adds it here, or ECharts logs what is missing.
// charming's renderer (app/src/components/chart.rs) calls the global `echarts`.
import * as echarts from "echarts/core";
import { BarChart, LineChart, ScatterChart } from "echarts/charts";
import {
  GridComponent,
  LegendComponent,
  MarkAreaComponent,
  MarkLineComponent,
  TooltipComponent,
} from "echarts/components";
import { CanvasRenderer } from "echarts/renderers";

echarts.use([
  BarChart,
  LineChart,
  ScatterChart,
  GridComponent,
  LegendComponent,
  MarkAreaComponent,
  MarkLineComponent,
  TooltipComponent,
  CanvasRenderer,
]);

window.echarts = echarts;
