import { JobProvider } from '@vega/job-react'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { App } from './app.js'
import './devtools.js'
import { runtime } from './runtime.js'

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <JobProvider runtime={runtime}>
      <App />
    </JobProvider>
  </StrictMode>,
)
