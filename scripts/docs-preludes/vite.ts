// prelude=vite: what a vite.config.ts sample imports.
import { defineConfig } from 'vite'
