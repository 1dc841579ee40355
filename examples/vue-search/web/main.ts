import { createJobPlugin } from '@vega/job-vue'
import { createApp } from 'vue'
import { App } from './app.js'
import { runtime } from './runtime.js'
import './tracks.js'

createApp(App).use(createJobPlugin(runtime)).mount('#root')
