import { render } from 'preact';
import { Api } from './api';
import { App } from './app';
import './style.css';

const api = new Api(localStorage);
render(<App api={api} />, document.getElementById('app')!);
